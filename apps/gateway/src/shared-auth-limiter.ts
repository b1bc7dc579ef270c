import type { FailureLimits, SharedCounters } from '@switchboard/core';
import type { AuthAttempt, FailedAuthGate } from './auth-limiter.js';

/** Longer keys (an unparsable address taken as itself) are cut: the table's keys stay small. */
const MAX_KEY = 200;

/**
 * Failed-auth limiting over the store's {@link SharedCounters} (PostgreSQL): the same rules as
 * {@link AuthLimiter} (an admitted attempt counts as a failure until it settles; `maxFailures`
 * wrong tokens within the window lock the address out; a right token does not clear earlier
 * failures), but every replica on the database counts towards one window and one lockout per
 * address. Each `begin` and `settle` is one atomic statement. An attempt whose replica dies before
 * it settles stays counted until the window passes (it fails closed, never open).
 */
export class SharedAuthLimiter implements FailedAuthGate {
  constructor(
    private readonly counters: SharedCounters,
    private readonly limits: FailureLimits,
    private readonly now: () => number = Date.now,
  ) {}

  async begin(address: string): Promise<AuthAttempt> {
    const key = address.slice(0, MAX_KEY);
    const now = this.now();
    const r = await this.counters.beginAttempt(key, this.limits, now);
    if (r.outcome === 'locked') return { locked: true, retryAfterSec: Math.max(1, Math.ceil((r.lockedUntil - now) / 1000)) };
    // The attempts in flight may all fail: refuse until they settle.
    if (r.outcome === 'busy') return { locked: true, retryAfterSec: 1 };
    let settled = false;
    return {
      locked: false,
      settle: async (ok) => {
        if (settled) return;
        settled = true;
        await this.counters.settleAttempt(key, r.at, ok, this.limits, this.now());
      },
    };
  }
}
