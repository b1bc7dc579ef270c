import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/boundary/policy.js';

const limit = { burst: 3, perMinute: 6 }; // one token every 10 s

describe('RateLimiter', () => {
  it('spends the burst, then refuses with one notice per empty spell', () => {
    const r = new RateLimiter();
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) expect(r.take('a', limit, t0)).toEqual({ ok: true, warn: false });
    expect(r.take('a', limit, t0)).toEqual({ ok: false, warn: true });
    expect(r.take('a', limit, t0)).toEqual({ ok: false, warn: false });
  });

  it('does not notice again when a steady flood earns a token back (only after a full refill)', () => {
    const r = new RateLimiter();
    let now = 1_000_000;
    for (let i = 0; i < 3; i++) r.take('a', limit, now);
    expect(r.take('a', limit, now).warn).toBe(true);
    // A flood just over the rate: every refilled token is spent, never a second notice.
    let warnings = 0;
    for (let i = 0; i < 50; i++) {
      now += 5_000;
      if (r.take('a', limit, now).warn) warnings++;
    }
    expect(warnings).toBe(0);
    // Quiet long enough to refill the bucket: the next empty spell is noticed again.
    now += 60_000;
    for (let i = 0; i < 3; i++) expect(r.take('a', limit, now).ok).toBe(true);
    expect(r.take('a', limit, now)).toEqual({ ok: false, warn: true });
  });

  it('keeps senders apart, including hostile keys', () => {
    const r = new RateLimiter();
    for (const k of ['__proto__', 'constructor', 'toString']) {
      for (let i = 0; i < 3; i++) expect(r.take(k, limit, 0).ok).toBe(true);
      expect(r.take(k, limit, 0).ok).toBe(false);
    }
    expect(r.take('other', limit, 0).ok).toBe(true);
  });

  it('force takes a token from an empty bucket, into bounded debt', () => {
    const r = new RateLimiter();
    for (let i = 0; i < 10; i++) expect(r.take('a', limit, 0, { force: true })).toEqual({ ok: true, warn: false });
    // Debt is at most one burst: after 2 bursts' worth of refill (60 s) the sender has tokens again.
    expect(r.take('a', limit, 30_000).ok).toBe(false);
    expect(r.take('a', limit, 70_000).ok).toBe(true);
  });
});
