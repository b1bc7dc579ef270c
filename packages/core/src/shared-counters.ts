/** A token bucket's size and refill rate (a channel account's `rateLimit`). */
export interface BucketLimit {
  burst: number;
  perMinute: number;
}

/** What one take from a token bucket answers (see {@link RateLimiter.take} for the meaning of `warn`). */
export interface BucketTake {
  ok: boolean;
  warn: boolean;
}

/** Failed-auth limits in milliseconds (the config's `auth` section). */
export interface FailureLimits {
  /** Wrong tokens from one key within `windowMs` before it is locked out. */
  maxFailures: number;
  windowMs: number;
  lockoutMs: number;
}

/**
 * How an authentication attempt was admitted: `admitted` (its reservation `at` counts as a failure
 * until it is settled), `locked` (refused until `lockedUntil`), or `busy` (the failures and the
 * attempts in flight already reach the limit: refused until they settle).
 */
export type FailureBegin = { outcome: 'admitted'; at: number } | { outcome: 'locked'; lockedUntil: number } | { outcome: 'busy' };

/**
 * Counters that every gateway on one database shares (PostgreSQL: replicas behind one load
 * balancer): the boundary's per-sender token buckets and the failed-auth windows. Each operation
 * is one atomic statement (no read-modify-write race between replicas); the in-memory limiters
 * are used instead on SQLite (one process), where these counters would only add writes.
 *
 * - Guarantees: concurrent takes from one bucket never grant more than the bucket holds; a
 *   failure recorded through any replica counts towards the one lockout of its key.
 * - Errors: every method rejects on a storage error (nothing is then granted or recorded).
 */
export interface SharedCounters {
  /**
   * Takes one token from bucket `key` (created full), refilled at `limit.perMinute` since its last
   * take. With `force` the token is taken even from an empty bucket (debt down to `-burst`).
   */
  take(key: string, limit: BucketLimit, now: number, opts?: { force?: boolean }): Promise<BucketTake>;
  /** Admits an authentication attempt from `key`, or refuses it (see {@link FailureBegin}). */
  beginAttempt(key: string, limits: FailureLimits, now: number): Promise<FailureBegin>;
  /**
   * Settles the attempt admitted at `at`: it stops being in flight and, when `ok` is false, is
   * recorded as a failure at `now`. True when this failure started a lockout.
   */
  settleAttempt(key: string, at: number, ok: boolean, limits: FailureLimits, now: number): Promise<boolean>;
  /** Whether `key` is locked out at `now`: the lockout's end, or null. */
  lockedUntil(key: string, now: number): Promise<number | null>;
  /**
   * Deletes the rows that carry nothing any more (buckets full again, failure windows and lockouts
   * over), so a flood of distinct senders or addresses cannot grow the tables without bound.
   * Returns how many rows went.
   */
  sweep(now: number): Promise<number>;
}
