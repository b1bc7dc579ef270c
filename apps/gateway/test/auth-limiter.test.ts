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

  it('keys on the address: IPv4-mapped IPv6 folded to IPv4, IPv6 aggregated by /64', () => {
    expect(addressKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(addressKey('::FFFF:7f00:2')).toBe('127.0.0.2');
    expect(addressKey('127.0.0.1')).toBe('127.0.0.1');
    expect(addressKey('::1')).toBe('::/64');
    expect(addressKey('FE80::1%eth0')).toBe('fe80::/64');
    // Every address of one /64 is one client; the next /64 is another.
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:0db8:0001:0002::9')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:3::9')).toBe('2001:db8:1:3::/64');
    expect(addressKey('not an address')).toBe('not an address');
    expect(addressKey(undefined)).toBe('unknown');
  });

  it('one /64 shares one lockout', () => {
    const l = new AuthLimiter(limits, clock().now);
    l.fail(addressKey('2001:db8::1'));
    l.fail(addressKey('2001:db8::2'));
    l.fail(addressKey('2001:db8::ffff:3'));
    expect(l.check(addressKey('2001:db8::4')).locked).toBe(true);
    expect(l.check(addressKey('2001:db8:0:1::4')).locked).toBe(false);
  });

  it('counts an attempt as a failure from begin until it settles', () => {
    const l = new AuthLimiter(limits, clock().now);
    const a = l.begin('a');
    const b = l.begin('a');
    const c = l.begin('a');
    // Three attempts in flight may all be wrong: a fourth waits for them.
    expect(l.begin('a')).toEqual({ locked: true, retryAfterSec: 1 });
    if (a.locked || b.locked || c.locked) throw new Error('expected the first three to be admitted');
    a.settle(true);
    a.settle(false); // a second settle is ignored
    const d = l.begin('a');
    expect(d.locked).toBe(false);
    b.settle(false);
    c.settle(false);
    if (!d.locked) d.settle(false);
    expect(l.check('a')).toEqual({ locked: true, retryAfterSec: 300 });
    expect(l.begin('a')).toEqual({ locked: true, retryAfterSec: 300 });
  });

  it('never evicts an active lockout, however many other addresses fail', () => {
    const c = clock();
    const l = new AuthLimiter(limits, c.now);
    for (let i = 0; i < 3; i++) l.fail('victim-of-lockout');
    for (let i = 0; i < 10_050; i++) {
      c.advance(1);
      l.fail(`10.1.${i >> 8}.${i & 255}`);
    }
    expect(l.check('victim-of-lockout').locked).toBe(true);
    expect(l.size).toBeLessThanOrEqual(10_001);
  });

  it('shares one key among new addresses when the table is full of lockouts', () => {
    const l = new AuthLimiter(limits, clock().now);
    for (let i = 0; i < 10_000; i++) for (let k = 0; k < 3; k++) l.fail(`10.2.${i >> 8}.${i & 255}`);
    expect(l.check('10.2.0.0').locked).toBe(true);
    expect(l.check('10.2.39.15').locked).toBe(true);
    // The table is full of lockouts: newcomers are counted together, not forgotten.
    for (let k = 0; k < 3; k++) l.fail(`192.0.2.${k}`);
    expect(l.check('198.51.100.1').locked).toBe(true);
    expect(l.size).toBe(10_001);
  });
});
