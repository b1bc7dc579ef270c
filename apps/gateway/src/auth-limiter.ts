import { isIP } from 'node:net';

/** Limits of {@link AuthLimiter}, in milliseconds (the config's `auth` section). */
export interface AuthLimits {
  /** Wrong tokens from one address within `windowMs` before it is locked out. */
  maxFailures: number;
  windowMs: number;
  lockoutMs: number;
}

/** Whether an address may try to authenticate now. */
export type AuthGate = { locked: false } | { locked: true; retryAfterSec: number };

interface AddressState {
  /** Times of recent failures, oldest first (at most `maxFailures`). */
  failures: number[];
  lockedUntil: number;
}

// Bounds memory under a flood of distinct addresses; the oldest entries go first.
const MAX_ADDRESSES = 10_000;

/**
 * The key of a client address: the socket's remote address, with IPv4-mapped IPv6 folded to
 * IPv4. Headers such as `X-Forwarded-For` never reach this (trustProxy stays off).
 */
export function addressKey(remoteAddress: string | undefined): string {
  if (!remoteAddress) return 'unknown';
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remoteAddress);
  if (v4 && isIP(v4[1]!) === 4) return v4[1]!;
  return remoteAddress.toLowerCase();
}

/**
 * Failed-auth rate limiting, shared by the control API and the WebSocket channel (DESIGN.md §8).
 * Only a presented wrong token counts; a request without a token never does. `maxFailures`
 * wrong tokens within `windowMs` lock the address out for `lockoutMs`: every presented token,
 * right or wrong, is then refused with a retry-after. A successful login does not clear earlier
 * failures (they age out of the window), so one valid token cannot launder a guessing run.
 */
export class AuthLimiter {
  private readonly state = new Map<string, AddressState>();

  constructor(
    private readonly limits: AuthLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `address` is locked out now. */
  check(address: string): AuthGate {
    const s = this.state.get(address);
    const now = this.now();
    if (!s || s.lockedUntil <= now) return { locked: false };
    return { locked: true, retryAfterSec: Math.max(1, Math.ceil((s.lockedUntil - now) / 1000)) };
  }

  /** Records a wrong token from `address`; true when this failure started a lockout. */
  fail(address: string): boolean {
    const now = this.now();
    let s = this.state.get(address);
    if (!s) {
      if (this.state.size >= MAX_ADDRESSES) this.evict(now);
      s = { failures: [], lockedUntil: 0 };
    } else {
      // Re-insert so that Map order stays least-recently-failed first.
      this.state.delete(address);
    }
    this.state.set(address, s);
    const since = now - this.limits.windowMs;
    s.failures = s.failures.filter((t) => t > since);
    s.failures.push(now);
    if (s.failures.length >= this.limits.maxFailures) {
      s.failures = [];
      s.lockedUntil = now + this.limits.lockoutMs;
      return true;
    }
    return false;
  }

  /** Addresses tracked now (for tests and diagnostics). */
  get size(): number {
    return this.state.size;
  }

  private evict(now: number): void {
    const since = now - this.limits.windowMs;
    for (const [k, s] of this.state) {
      if (s.lockedUntil <= now && s.failures.every((t) => t <= since)) this.state.delete(k);
    }
    while (this.state.size >= MAX_ADDRESSES) {
      const oldest = this.state.keys().next();
      if (oldest.done) break;
      this.state.delete(oldest.value);
    }
  }
}
