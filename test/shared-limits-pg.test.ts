import { SharedRateLimiter } from '@switchboard/core';
import { openPostgresStorage, type PostgresStorage } from '@switchboard/store';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SharedAuthLimiter } from '../apps/gateway/src/shared-auth-limiter.js';

// Two "replicas" in one process: each opens its own pool on the same PostgreSQL database, and the
// boundary's buckets and the failed-auth windows they keep must be one budget, not two.
let server: PgServer;
const TEMPLATE = 'sb_limits_template';
const opened: PostgresStorage[] = [];

beforeAll(async () => {
  server = await startPostgres();
  const s = await openPostgresStorage({ url: await server.createDatabase({ name: TEMPLATE }) });
  await s.close();
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await server?.destroy();
});

/** Two storages (own pools) on one fresh database. */
async function replicas(): Promise<[PostgresStorage, PostgresStorage]> {
  const url = await server.createDatabase({ template: TEMPLATE });
  const a = await openPostgresStorage({ url, max: 4 });
  const b = await openPostgresStorage({ url, max: 4 });
  opened.push(a, b);
  return [a, b];
}

function clock(start = 1_000_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const rows = async (s: PostgresStorage, table: 'rate_buckets' | 'auth_failures') =>
  (await s.db.row<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))?.n;

describe('shared rate-limit buckets on PostgreSQL', () => {
  it('two replicas share one bucket: the sum of allowed messages is one burst; one notice per empty spell', async () => {
    const [a, b] = await replicas();
    const limiters = [new SharedRateLimiter(a.counters!), new SharedRateLimiter(b.counters!)];
    const limit = { burst: 5, perMinute: 1 };
    const now = 5_000_000;
    const results = [];
    for (let i = 0; i < 12; i++) results.push(await limiters[i % 2]!.take('telegram:main|telegram:42', limit, now));
    expect(results.filter((r) => r.ok)).toHaveLength(5);
    expect(results.filter((r) => r.warn)).toHaveLength(1);
    expect(results[5]).toEqual({ ok: false, warn: true });
    // Another sender has a bucket of their own.
    expect(await limiters[1]!.take('telegram:main|telegram:43', limit, now)).toEqual({ ok: true, warn: false });
    // One minute refills one token, whichever replica asks.
    expect(await limiters[1]!.take('telegram:main|telegram:42', limit, now + 60_000)).toEqual({ ok: true, warn: false });
    expect(await limiters[0]!.take('telegram:main|telegram:42', limit, now + 60_000)).toEqual({ ok: false, warn: false });
    // A forced take (approved held messages) goes into debt, down to -burst.
    for (let i = 0; i < 20; i++) expect((await limiters[i % 2]!.take('telegram:main|telegram:42', limit, now + 60_000, { force: true })).ok).toBe(true);
    const row = await a.db.row<{ tokens: number }>("SELECT tokens FROM rate_buckets WHERE key = 'telegram:main|telegram:42'");
    expect(row?.tokens).toBe(-5);
  });

  it('20 parallel takes from one bucket through two pools never over-grant', async () => {
    const [a, b] = await replicas();
    const limiters = [new SharedRateLimiter(a.counters!), new SharedRateLimiter(b.counters!)];
    for (const burst of [1, 7, 19]) {
      const key = `slack:team|slack:T:U${burst}`;
      const taken = await Promise.all(Array.from({ length: 20 }, (_, i) => limiters[i % 2]!.take(key, { burst, perMinute: 0.1 }, 7_000_000)));
      expect(taken.filter((r) => r.ok)).toHaveLength(burst);
      expect(taken.filter((r) => r.warn)).toHaveLength(1);
    }
  });
});

describe('shared failed-auth lockouts on PostgreSQL', () => {
  const limits = { maxFailures: 3, windowMs: 60_000, lockoutMs: 300_000 };

  it('wrong tokens through either replica count towards one lockout, which both then enforce', async () => {
    const [a, b] = await replicas();
    const c = clock();
    const la = new SharedAuthLimiter(a.counters!, limits, c.now);
    const lb = new SharedAuthLimiter(b.counters!, limits, c.now);
    for (const l of [la, lb]) {
      const attempt = await l.begin('203.0.113.7');
      if (attempt.locked) throw new Error('locked too early');
      await attempt.settle(false);
    }
    // A right token does not launder the failures.
    const right = await la.begin('203.0.113.7');
    if (right.locked) throw new Error('locked too early');
    await right.settle(true);
    const third = await lb.begin('203.0.113.7');
    if (third.locked) throw new Error('locked too early');
    await third.settle(false);
    expect(await la.begin('203.0.113.7')).toEqual({ locked: true, retryAfterSec: 300 });
    expect(await lb.begin('203.0.113.7')).toEqual({ locked: true, retryAfterSec: 300 });
    expect((await lb.begin('198.51.100.1')).locked).toBe(false);
    expect(await a.counters!.lockedUntil('203.0.113.7', c.now())).toBe(c.now() + 300_000);
    c.advance(300_000);
    expect((await la.begin('203.0.113.7')).locked).toBe(false);
  });

  it('failures older than the window do not count', async () => {
    const [a, b] = await replicas();
    const c = clock();
    const la = new SharedAuthLimiter(a.counters!, limits, c.now);
    const lb = new SharedAuthLimiter(b.counters!, limits, c.now);
    for (const l of [la, lb]) {
      const attempt = await l.begin('10.0.0.1');
      if (!attempt.locked) await attempt.settle(false);
      c.advance(40_000);
    }
    // The first failure is now 80 s old: two in the window, not three.
    const attempt = await la.begin('10.0.0.1');
    if (attempt.locked) throw new Error('locked although the window moved');
    await attempt.settle(false);
    // Three failures, but only two in the window: not locked; one more is the third.
    const fourth = await lb.begin('10.0.0.1');
    if (fourth.locked) throw new Error('locked although the window moved');
    await fourth.settle(false);
    expect(await la.begin('10.0.0.1')).toEqual({ locked: true, retryAfterSec: 300 });
  });

  it('20 parallel guesses through two pools: at most maxFailures are admitted, then the address is locked out', async () => {
    const [a, b] = await replicas();
    const c = clock();
    const ls = [
      new SharedAuthLimiter(a.counters!, { ...limits, maxFailures: 5 }, c.now),
      new SharedAuthLimiter(b.counters!, { ...limits, maxFailures: 5 }, c.now),
    ];
    const attempts = await Promise.all(Array.from({ length: 20 }, (_, i) => ls[i % 2]!.begin('2001:db8::/64')));
    const admitted = attempts.filter((x) => !x.locked);
    expect(admitted).toHaveLength(5);
    expect(attempts.filter((x) => x.locked).every((x) => x.locked && x.retryAfterSec === 1)).toBe(true);
    await Promise.all(admitted.map((x) => !x.locked && x.settle(false)));
    expect(await ls[1]!.begin('2001:db8::/64')).toEqual({ locked: true, retryAfterSec: 300 });
  });

  it('an attempt settled as right frees its place at once; settling twice counts once', async () => {
    const [a] = await replicas();
    const c = clock();
    const l = new SharedAuthLimiter(a.counters!, { ...limits, maxFailures: 1 }, c.now);
    const first = await l.begin('192.0.2.1');
    if (first.locked) throw new Error('locked');
    expect((await l.begin('192.0.2.1')).locked).toBe(true);
    await first.settle(true);
    await first.settle(false);
    const second = await l.begin('192.0.2.1');
    expect(second.locked).toBe(false);
  });
});

describe('the shared counters do not grow without bound', () => {
  it('sweep deletes full buckets and failure windows that are over, and keeps the live ones', async () => {
    const [a, b] = await replicas();
    const counters = a.counters!;
    const limit = { burst: 2, perMinute: 60 };
    const now = 9_000_000;
    for (let i = 0; i < 50; i++) await counters.take(`k|sender${i}`, limit, now);
    await counters.take('k|busy', limit, now);
    await counters.take('k|busy', limit, now);
    const auth = new SharedAuthLimiter(b.counters!, { maxFailures: 2, windowMs: 60_000, lockoutMs: 600_000 }, () => now);
    for (let i = 0; i < 30; i++) {
      const x = await auth.begin(`198.51.100.${i}`);
      if (!x.locked) await x.settle(false);
    }
    for (let i = 0; i < 2; i++) {
      const x = await auth.begin('203.0.113.99');
      if (!x.locked) await x.settle(false);
    }
    expect(await rows(a, 'rate_buckets')).toBe(51);
    expect(await rows(a, 'auth_failures')).toBe(31);
    // Nothing is over yet.
    expect(await b.counters!.sweep(now)).toBe(0);
    // One second refills one token (60/min): the senders who took one are full again; `busy` (two taken) is not.
    expect(await b.counters!.sweep(now + 1000)).toBe(50);
    expect(await rows(a, 'rate_buckets')).toBe(1);
    // After the window the single failures are over (and `busy` is full again); the lockout is not.
    expect(await counters.sweep(now + 60_000)).toBe(31);
    expect(await rows(a, 'auth_failures')).toBe(1);
    expect(await counters.lockedUntil('203.0.113.99', now + 60_000)).toBe(now + 600_000);
    expect(await counters.sweep(now + 600_000)).toBe(1);
    expect(await rows(a, 'auth_failures')).toBe(0);
  });
});
