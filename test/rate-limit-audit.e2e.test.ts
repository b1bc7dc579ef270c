import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useWebhookGateway } from './webhook-helpers.js';

// Issue 10, point 14: rate-limited messages are audited as one row per sender per window, with a
// count — not one row per message.
const env = useWebhookGateway({ main: { dmPolicy: 'open', allowFrom: ['*'], rateLimit: { burst: 2, perMinute: 1 } } }, { audit: { rateLimitWindow: '1h' } });

describe('rate-limit audit aggregation (issue 10, point 14)', () => {
  it('300 messages over the limit from one sender leave one audit row with their count', async () => {
    const { gw, platform } = env;
    let limited = 0;
    for (let i = 0; i < 300; i++) {
      const res = await platform.send(gw, platform.dm('chatty', `message ${i}`));
      expect(res.status).toBe(202);
      if (res.json.gate === 'rate_limited') limited++;
    }
    expect(limited).toBeGreaterThan(290);
    // A second sender over the limit gets a row of its own.
    for (let i = 0; i < 5; i++) await platform.send(gw, platform.dm('other', `hi ${i}`));
    // Counts still in memory are written when the gateway stops.
    await gw.stop();
    const db = new Database(join(gw.dataDir, 'switchboard.db'), { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare(`SELECT target, detail FROM audit WHERE action = 'gate.rate_limited' ORDER BY id`).all() as Array<{
        target: string;
        detail: string;
      }>;
      const details = rows.map((r) => JSON.parse(r.detail) as { identity: string; count: number; window: number });
      expect(details).toEqual([
        expect.objectContaining({ identity: 'webhook:chatty', count: limited, window: 3_600_000 }),
        expect.objectContaining({ identity: 'webhook:other', count: 3 }),
      ]);
      expect(rows.every((r) => r.target === 'webhook:main')).toBe(true);
    } finally {
      db.close();
    }
  }, 120_000);
});
