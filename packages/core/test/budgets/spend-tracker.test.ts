import { openSqliteStorage } from '@switchboard/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type NewUsageRecord, periodWindow, SpendTracker, type Storage } from '../../src/index.js';

const row = (tokens: number, over: Partial<NewUsageRecord> = {}): NewUsageRecord => ({
  turnId: 't',
  sessionId: 's',
  principalId: 'p1',
  agentId: 'a1',
  channel: 'websocket:default',
  model: 'm',
  inputTokens: tokens,
  outputTokens: 1,
  cacheReadInputTokens: 2,
  cacheCreationInputTokens: 3,
  costUsd: 0.5,
  ...over,
});

let storage: Storage & { close(): void };
beforeEach(() => {
  storage = openSqliteStorage({ file: ':memory:' });
});
afterEach(() => storage.close());

const windowsAt = (t: Date) => ({ day: periodWindow('day', t, 'UTC'), month: periodWindow('month', t, 'UTC') });
const P1 = { kind: 'principal' as const, principalId: 'p1' };
const A1 = { kind: 'agent' as const, agentId: 'a1' };
const ALL = { kind: 'gateway' as const };

describe('SpendTracker', () => {
  it('seeds each subject from the store once, then adds the rows stored since (by anyone) to the subjects they count in', async () => {
    await storage.usage.record(row(94));
    let reads = 0;
    const spend = storage.usage.spend.bind(storage.usage);
    const tracker = new SpendTracker({
      spend: (...args) => {
        reads++;
        return spend(...args);
      },
      changes: storage.usage.changes.bind(storage.usage),
    });
    const w = windowsAt(new Date());
    const [p, a, g] = await tracker.spend([P1, A1, ALL], w);
    expect([p, a, g]).toEqual([
      { day: { tokens: 100, usd: 0.5 }, month: { tokens: 100, usd: 0.5 } },
      { day: { tokens: 100, usd: 0.5 }, month: { tokens: 100, usd: 0.5 } },
      { day: { tokens: 100, usd: 0.5 }, month: { tokens: 100, usd: 0.5 } },
    ]);
    await storage.usage.record(row(4, { principalId: 'p2' }));
    await storage.usage.record(row(14, { agentId: 'a2', principalId: null }));
    const [p2, a2, g2] = await tracker.spend([P1, A1, ALL], w);
    expect(p2!.day.tokens).toBe(100);
    expect(a2!.day.tokens).toBe(110);
    expect(g2!.day.tokens).toBe(130);
    expect(g2!.month.usd).toBe(1.5);
    expect(reads).toBe(3);
    // A subject first asked for later is seeded through the rows already applied: nothing twice.
    const [other] = await tracker.spend([{ kind: 'agent', agentId: 'a2' }], w);
    expect(other!.day.tokens).toBe(20);
  });

  it('concurrent checks count each new row once', async () => {
    const tracker = new SpendTracker(storage.usage);
    const w = windowsAt(new Date());
    await tracker.spend([ALL], w);
    await storage.usage.record(row(94));
    const all = await Promise.all([tracker.spend([ALL], w), tracker.spend([ALL, P1], w), tracker.spend([ALL], w)]);
    expect(all.map((r) => r[0]!.day.tokens)).toEqual([100, 100, 100]);
    expect(all[1]![1]!.day.tokens).toBe(100);
  });

  it('starts over in a new period: rows before the day count in the month only', async () => {
    const tracker = new SpendTracker(storage.usage);
    await storage.usage.record(row(94));
    // As seen from a clock one day ahead: the row is before that day (in the month, unless the month changed too).
    const tomorrow = new Date(Date.now() + 86_400_000);
    const w = windowsAt(tomorrow);
    const [p] = await tracker.spend([P1], w);
    expect(p!.day.tokens).toBe(0);
    const sameMonth = w.month.start.getTime() <= Date.now();
    expect(p!.month.tokens).toBe(sameMonth ? 100 : 0);
    await storage.usage.record(row(94));
    const [later] = await tracker.spend([P1], w);
    expect(later!.day.tokens).toBe(0);
    expect(later!.month.tokens).toBe(sameMonth ? 200 : 0);
  });
});
