import { describe, expect, it } from 'vitest';
import { AuthLimiter, addressKey } from '../src/auth-limiter.js';

const limits = { maxFailures: 3, windowMs: 60_000, lockoutMs: 300_000 };

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe('AuthLimiter', () => {
  it('locks an address out after maxFailures within the window, for lockoutMs', () => {
    const c = clock();
    const l = new AuthLimiter(limits, c.now);
    expect(l.fail('a')).toBe(false);
    expect(l.fail('a')).toBe(false);
    expect(l.check('a')).toEqual({ locked: false });
    expect(l.fail('a')).toBe(true);
    expect(l.check('a')).toEqual({ locked: true, retryAfterSec: 300 });
    expect(l.check('b')).toEqual({ locked: false });
    c.advance(120_500);
    expect(l.check('a')).toEqual({ locked: true, retryAfterSec: 180 });
    c.advance(179_500);
    expect(l.check('a')).toEqual({ locked: false });
    // The count starts afresh after a lockout.
    expect(l.fail('a')).toBe(false);
  });

  it('forgets failures older than the window', () => {
    const c = clock();
    const l = new AuthLimiter(limits, c.now);
    l.fail('a');
    l.fail('a');
    c.advance(60_001);
    expect(l.fail('a')).toBe(false);
    expect(l.fail('a')).toBe(false);
    expect(l.fail('a')).toBe(true);
  });

  it('keeps memory bounded under many addresses', () => {
    const l = new AuthLimiter(limits, clock().now);
    for (let i = 0; i < 10_050; i++) l.fail(`10.0.${i >> 8}.${i & 255}`);
    expect(l.size).toBeLessThanOrEqual(10_000);
  });

  it('keys on the socket address, folding IPv4-mapped IPv6', () => {
    expect(addressKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(addressKey('127.0.0.1')).toBe('127.0.0.1');
    expect(addressKey('::1')).toBe('::1');
    expect(addressKey('FE80::1')).toBe('fe80::1');
    expect(addressKey(undefined)).toBe('unknown');
  });
});
