import { randomBytes } from 'node:crypto';
import type { AccessChange, Role, Scope, Storage, TokenRecord } from '@switchboard/core';
import { hashSecret } from '../tokens.js';

/** The name of the console's session cookie. */
export const SESSION_COOKIE = 'swb_session';

/** Who a console session signed in as: an operator token's scopes, or a client token's principal. */
export type ConsoleIdentity = { kind: 'operator'; name: string; scopes: readonly Scope[] } | { kind: 'client'; name: string; principalId: string; role: Role };

/** A console session: the identity, its token, its CSRF token and when it ends. */
export type ConsoleSession = ConsoleIdentity & {
  /** sha256 of the cookie value (the map key); the value itself is never kept. */
  readonly hash: string;
  readonly tokenId: string;
  readonly csrfToken: string;
  readonly expiresAt: Date;
};

/** A session as {@link ConsoleSessions.resolve} hands it out, with its token as stored now. */
export interface ResolvedSession {
  session: ConsoleSession;
  token: TokenRecord;
}

// Bounds memory: at most this many live sessions (the oldest is ended to make room), and per token.
const MAX_SESSIONS = 10_000;
const MAX_PER_TOKEN = 50;
// setTimeout's longest delay; a longer session is ended when next used after its end.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The console's sessions, in memory: a restart signs everyone out (they sign in again with their
 * token), which is the safe failure. A session is keyed by the sha256 of its cookie, bound to the
 * token it was opened with — a revoked, expired or removed token ends it, checked on every use
 * and pushed by access changes — and ends at its own `expiresAt`.
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly endListeners = new Set<(s: ConsoleSession) => void>();

  constructor(
    private readonly opts: { storage: Storage; ttlMs: number },
    private readonly now: () => number = Date.now,
  ) {}

  /** Opens a session for a verified token; returns the cookie value (shown to the browser only) and the session. */
  open(identity: ConsoleIdentity, token: TokenRecord): { cookie: string; session: ConsoleSession } {
    this.sweep();
    // One token's sign-ins cannot crowd out everyone else's: its own oldest session goes first.
    const own = [...this.sessions.values()].filter((s) => s.tokenId === token.id);
    if (own.length >= MAX_PER_TOKEN) this.end(own[0]!);
    if (this.sessions.size >= MAX_SESSIONS) {
      const oldest = this.sessions.values().next().value;
      if (oldest) this.end(oldest);
    }
    const cookie = randomBytes(32).toString('base64url');
    const ttlEnd = this.now() + this.opts.ttlMs;
    // A session never outlives its token.
    const end = token.expiresAt ? Math.min(ttlEnd, token.expiresAt.getTime()) : ttlEnd;
    const session: ConsoleSession = {
      ...identity,
      hash: hashSecret(cookie),
      tokenId: token.id,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: new Date(end),
    };
    this.sessions.set(session.hash, session);
    // Its open sockets and streams end when it does, not at their next use.
    const ms = end - this.now();
    if (ms <= MAX_TIMER_MS) {
      const t = setTimeout(() => this.end(session), ms);
      t.unref();
      this.timers.set(session.hash, t);
    }
    return { cookie, session };
  }

  /**
   * The live session of a cookie value and its token as stored now, or null (unknown, expired,
   * or its token revoked, expired or without its principal — such a session is ended).
   */
  async resolve(cookie: string): Promise<ResolvedSession | null> {
    if (cookie.length < 20 || cookie.length > 200) return null;
    const session = this.sessions.get(hashSecret(cookie));
    if (!session) return null;
    if (session.expiresAt.getTime() <= this.now()) {
      this.end(session);
      return null;
    }
    const token = await this.opts.storage.tokens.get(session.tokenId);
    const dead = !token || token.revokedAt !== null || (token.expiresAt !== null && token.expiresAt.getTime() <= this.now());
    if (dead) {
      this.end(session);
      return null;
    }
    if (session.kind === 'client') {
      const principal = await this.opts.storage.principals.get(session.principalId);
      if (!principal || principal.role !== session.role) {
        this.end(session);
        return null;
      }
    }
    return { session, token };
  }

  /** Ends a session (logout); its live streams are told. */
  end(session: ConsoleSession): void {
    if (!this.sessions.delete(session.hash)) return;
    clearTimeout(this.timers.get(session.hash));
    this.timers.delete(session.hash);
    for (const l of this.endListeners) l(session);
  }

  /** Ends the sessions an access change takes authority from. */
  readonly onAccessChange = (change: AccessChange): void => {
    for (const s of [...this.sessions.values()]) {
      const hit =
        ((change.type === 'token_revoked' || change.type === 'token_expired') && s.tokenId === change.tokenId) ||
        ((change.type === 'principal_removed' || change.type === 'principal_demoted') && s.kind === 'client' && s.principalId === change.principalId);
      if (hit) this.end(s);
    }
  };

  /** Subscribes to sessions ending (logout, expiry seen, revocation); returns the unsubscribe. */
  onEnd(listener: (s: ConsoleSession) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  /** Live sessions (for tests and diagnostics). */
  get size(): number {
    return this.sessions.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const s of [...this.sessions.values()]) if (s.expiresAt.getTime() <= now) this.end(s);
  }
}
