import ipaddr from 'ipaddr.js';

/** Limits of {@link AuthLimiter}, in milliseconds (the config's `auth` section). */
export interface AuthLimits {
  /** Wrong tokens from one address within `windowMs` before it is locked out. */
  maxFailures: number;
  windowMs: number;
  lockoutMs: number;
}

/** Whether an address may try to authenticate now. */
export type AuthGate = { locked: false } | { locked: true; retryAfterSec: number };

/**
 * An admitted attempt: its token counts as a failure from the moment it was admitted until
 * `settle` says how the verify went.
 */
export type AuthAttempt = { locked: false; settle(ok: boolean): void | Promise<void> } | { locked: true; retryAfterSec: number };

/**
 * Failed-auth limiting as the routes use it: {@link AuthLimiter} in memory (SQLite: one process),
 * {@link SharedAuthLimiter} (shared-auth-limiter.ts) over the store's shared counters (PostgreSQL:
 * replicas share one lockout per address). Await both `begin` and `settle`.
 */
export interface FailedAuthGate {
  /** Admits one attempt from `address` or refuses it (locked out, or too many attempts in flight). Call `settle` exactly once. */
  begin(address: string): AuthAttempt | Promise<AuthAttempt>;
}

interface AddressState {
  /** Times of recent failures, oldest first (at most `maxFailures`). */
  failures: number[];
  /** Attempts admitted whose verify has not finished yet: they count as failures meanwhile. */
  pending: number;
  lockedUntil: number;
}

// Bounds memory under a flood of distinct addresses.
const MAX_ADDRESSES = 10_000;
/** The key every new address shares once the table is full of lockouts (so none is dropped). */
export const OVERFLOW_KEY = 'overflow';

/**
 * The key of a client address: IPv4 as is (IPv4-mapped IPv6 folded to IPv4), IPv6 aggregated to
 * its /64 (one host's whole prefix is one client), anything unparsable as itself, lower-cased.
 */
export function addressKey(remoteAddress: string | undefined): string {
  if (!remoteAddress) return 'unknown';
  const text = remoteAddress.replace(/%.*$/, '');
  if (!ipaddr.isValid(text)) return remoteAddress.toLowerCase();
  const addr = ipaddr.parse(text);
  if (addr.kind() === 'ipv4') return addr.toString();
  const v6 = addr as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const parts = v6.parts.slice(0, 4);
  return `${ipaddr.IPv6.parse(`${parts.map((p) => p.toString(16)).join(':')}::`).toString()}/64`;
}

/**
 * Failed-auth rate limiting, shared by the control API and the WebSocket channel (DESIGN.md §8).
 * Only a presented wrong token counts; a request without a token never does. `maxFailures`
 * wrong tokens within `windowMs` lock the address out for `lockoutMs`: every presented token,
 * right or wrong, is then refused with a retry-after. A successful login does not clear earlier
 * failures (they age out of the window), so one valid token cannot launder a guessing run.
 *
 * Attempts go through {@link AuthLimiter.begin}: an attempt counts as a failure from before its
 * (asynchronous) verify, so pipelined or parallel guesses cannot all pass the check before the
 * first failure is recorded. An active lockout is never evicted to make room for new addresses.
 */
export class AuthLimiter implements FailedAuthGate {
  private readonly state = new Map<string, AddressState>();

  constructor(
    private readonly limits: AuthLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `address` is locked out now. */
  check(address: string): AuthGate {
    const s = this.state.get(this.keyOf(address));
    const now = this.now();
    if (!s || s.lockedUntil <= now) return { locked: false };
    return { locked: true, retryAfterSec: this.retryAfter(s, now) };
  }

  /**
   * Admits one attempt from `address`, or refuses it when the address is locked out or already
   * has `maxFailures` failures and unfinished attempts together. Call `settle` exactly once.
   */
  begin(address: string): AuthAttempt {
    const now = this.now();
    const key = this.keyOf(address);
    const s = this.entry(key, now);
    if (s.lockedUntil > now) return { locked: true, retryAfterSec: this.retryAfter(s, now) };
    this.prune(s, now);
    if (s.failures.length + s.pending >= this.limits.maxFailures) {
      // The attempts in flight may all fail: refuse until they settle.
      return { locked: true, retryAfterSec: 1 };
    }
    s.pending++;
    let settled = false;
    return {
      locked: false,
      settle: (ok) => {
        if (settled) return;
        settled = true;
        s.pending--;
        if (!ok) this.recordFailure(key, s);
      },
    };
  }

  /** Records a wrong token from `address`; true when this failure started a lockout. */
  fail(address: string): boolean {
    const key = this.keyOf(address);
    return this.recordFailure(key, this.entry(key, this.now()));
  }

  /** Addresses tracked now (for tests and diagnostics). */
  get size(): number {
    return this.state.size;
  }

  private recordFailure(key: string, s: AddressState): boolean {
    const now = this.now();
    // Re-insert so that Map order stays least-recently-failed first.
    if (this.state.get(key) === s) this.state.delete(key);
    this.state.set(key, s);
    this.prune(s, now);
    s.failures.push(now);
    if (s.failures.length >= this.limits.maxFailures) {
      s.failures = [];
      s.lockedUntil = now + this.limits.lockoutMs;
      return true;
    }
    return false;
  }

  private retryAfter(s: AddressState, now: number): number {
    return Math.max(1, Math.ceil((s.lockedUntil - now) / 1000));
  }

  private prune(s: AddressState, now: number): void {
    const since = now - this.limits.windowMs;
    if (s.failures.length > 0 && s.failures[0]! <= since) s.failures = s.failures.filter((t) => t > since);
  }

  /** The key an address is tracked under: itself, or the shared overflow key when the table is full. */
  private keyOf(address: string): string {
    if (this.state.has(address) || this.state.size < MAX_ADDRESSES) return address;
    this.evict(this.now());
    return this.state.size < MAX_ADDRESSES ? address : OVERFLOW_KEY;
  }

  private entry(key: string, now: number): AddressState {
    let s = this.state.get(key);
    if (!s) {
      if (key !== OVERFLOW_KEY && this.state.size >= MAX_ADDRESSES) this.evict(now);
      s = { failures: [], pending: 0, lockedUntil: 0 };
      this.state.set(key, s);
    }
    return s;
  }

  /** Drops idle entries, then the least recently failed ones that are neither locked nor in flight. */
  private evict(now: number): void {
    const since = now - this.limits.windowMs;
    const removable = (s: AddressState) => s.lockedUntil <= now && s.pending === 0;
    for (const [k, s] of this.state) {
      if (removable(s) && s.failures.every((t) => t <= since)) this.state.delete(k);
    }
    for (const [k, s] of this.state) {
      if (this.state.size < MAX_ADDRESSES) break;
      if (removable(s) && k !== OVERFLOW_KEY) this.state.delete(k);
    }
  }
}
