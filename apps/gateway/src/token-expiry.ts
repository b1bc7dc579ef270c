import type { AccessEvents } from '@switchboard/core';

/** setTimeout's largest delay (about 24.8 days); a later expiry re-arms when it fires. */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * Announces `token_expired` on the access bus when a client token with an `expiresAt` that
 * authenticated a connection reaches it, so open sockets on it close then, not at their next
 * frame (a silent socket would otherwise keep receiving). One timer per token, unref'd.
 */
export class TokenExpiry {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly access: AccessEvents) {}

  /** Arms the timer of `tokenId` (idempotent: a token has one expiry). */
  arm(tokenId: string, expiresAt: Date): void {
    if (this.closed || this.timers.has(tokenId)) return;
    const fire = () => {
      const left = expiresAt.getTime() - Date.now();
      if (left > 0) {
        this.timers.set(tokenId, setTimeout(fire, Math.min(left, MAX_DELAY)).unref());
        return;
      }
      this.timers.delete(tokenId);
      this.access.emit({ type: 'token_expired', tokenId });
    };
    this.timers.set(tokenId, setTimeout(fire, Math.min(Math.max(0, expiresAt.getTime() - Date.now()), MAX_DELAY)).unref());
  }

  /** Cancels every timer (shutdown). */
  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
