import { openSqliteStorage } from '@switchboard/store';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { RateLimitAudit } from '../../src/boundary/rate-limit-audit.js';

const storage = openSqliteStorage({ file: ':memory:' });
afterAll(() => storage.close());
const rows = async () =>
  (await storage.audit.list({ action: 'gate.rate_limited', limit: 500 })).reverse().map((e) => ({ target: e.target, ...(e.detail as object) }));

describe('RateLimitAudit', () => {
  it('one row per sender per window, with the count; a new window starts a new row', async () => {
    const audit = new RateLimitAudit(storage, 60_000, pino({ level: 'silent' }));
    const t0 = 1_000_000;
    for (let i = 0; i < 50; i++) await audit.record('webhook:main', 'webhook:a', t0 + i);
    for (let i = 0; i < 3; i++) await audit.record('webhook:main', '__proto__', t0 + i);
    expect(await rows()).toEqual([
      expect.objectContaining({ target: 'webhook:main', identity: 'webhook:a', count: 1, window: 60_000 }),
      expect.objectContaining({ identity: '__proto__', count: 1 }),
    ]);
    // The next window: the old row gets its final count, a new one starts.
    await audit.record('webhook:main', 'webhook:a', t0 + 60_000);
    await audit.stop();
    expect(await rows()).toEqual([
      expect.objectContaining({ identity: 'webhook:a', count: 50 }),
      expect.objectContaining({ identity: '__proto__', count: 3 }),
      expect.objectContaining({ identity: 'webhook:a', count: 1 }),
    ]);
  });
});
