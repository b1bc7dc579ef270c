import { expect, it } from 'vitest';
import { queueTurn, type StorageRef, usageCall } from './fixtures.js';

const call = usageCall;

const ZERO = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUsd: 0, calls: 0 };

/** Usage rows: one per model call, summed by filter into totals and a per-UTC-day series. */
export function usageContract(store: StorageRef): void {
  it('a turn stores its calls with its begin, its appends and its end, and rolls them back with them', async () => {
    const s = store();
    const { turnId, sessionId } = await queueTurn(s, 'u1');
    const mine = (n: number) => call({ turnId, sessionId, inputTokens: n });
    await s.turns.begin(turnId, [{ kind: 'user', turnId, payload: {} }], [mine(1)]);
    const appended = await s.turns.append(turnId, [{ kind: 'assistant', turnId, payload: {} }], [mine(2)]);
    expect(appended.map((e) => e.kind)).toEqual(['assistant']);
    await s.turns.finish(turnId, { state: 'completed', calls: [mine(4)] });
    expect((await s.usage.report()).totals).toMatchObject({ inputTokens: 7, calls: 3 });
    // A write that fails stores neither its entries nor its calls.
    const bad = { kind: null, turnId, payload: {} } as unknown as { kind: 'user'; turnId: string; payload: unknown };
    const other = await queueTurn(s, 'u2');
    await expect(s.turns.finish(other.turnId, { state: 'completed', entries: [bad], calls: [mine(100)] })).rejects.toThrow();
    await expect(s.turns.append('missing', [], [mine(100)])).rejects.toThrow(/unknown turn/);
    expect((await s.usage.report()).totals).toMatchObject({ inputTokens: 7, calls: 3 });
  });

  it('records a call with its context size and answers nothing counted for an empty table', async () => {
    const s = store();
    expect(await s.usage.report()).toEqual({ totals: ZERO, days: [] });
    const row = await s.usage.record(call({ principalId: null }));
    expect(row).toMatchObject({ ...call({ principalId: null }), contextTokens: 130 });
    expect(row.id).toEqual(expect.any(String));
    expect(row.createdAt).toBeInstanceOf(Date);
    const report = await s.usage.report();
    expect(report.totals).toEqual({ inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 100, cacheCreationInputTokens: 20, costUsd: 0.001, calls: 1 });
    expect(report.days).toEqual([{ day: row.createdAt.toISOString().slice(0, 10), ...report.totals }]);
  });

  it('sums the rows each filter matches: principal, agent, channel, model and the time range', async () => {
    const s = store();
    await s.usage.record(call());
    await s.usage.record(call({ principalId: 'p2', inputTokens: 1, costUsd: 0.002 }));
    await s.usage.record(call({ agentId: 'ops', model: 'claude-haiku-4-5', outputTokens: 7 }));
    await s.usage.record(call({ channel: 'telegram:main', principalId: null }));
    expect((await s.usage.report()).totals).toMatchObject({ inputTokens: 31, outputTokens: 22, calls: 4, costUsd: 0.005 });
    expect((await s.usage.report({ principalId: 'p1' })).totals).toMatchObject({ calls: 2, outputTokens: 12 });
    expect((await s.usage.report({ principalId: 'p2' })).totals).toMatchObject({ calls: 1, inputTokens: 1, costUsd: 0.002 });
    expect((await s.usage.report({ agentId: 'ops' })).totals).toMatchObject({ calls: 1, outputTokens: 7 });
    expect((await s.usage.report({ model: 'claude-haiku-4-5' })).totals.calls).toBe(1);
    expect((await s.usage.report({ channel: 'telegram:main' })).totals.calls).toBe(1);
    expect((await s.usage.report({ agentId: 'main', principalId: 'p1' })).totals.calls).toBe(1);
    expect((await s.usage.report({ agentId: 'nobody' })).totals).toEqual(ZERO);
    const now = Date.now();
    expect((await s.usage.report({ from: new Date(now - 60_000), before: new Date(now + 60_000) })).totals.calls).toBe(4);
    expect((await s.usage.report({ from: new Date(now + 60_000) })).totals.calls).toBe(0);
    expect((await s.usage.report({ before: new Date(now - 60_000) })).days).toEqual([]);
  });

  it('splits the series by UTC day, oldest first, and the totals are the sum of the days', async () => {
    const s = store();
    const realNow = Date.now;
    try {
      Date.now = () => Date.parse('2025-03-01T23:59:59.000Z');
      await s.usage.record(call({ inputTokens: 1 }));
      Date.now = () => Date.parse('2025-03-02T00:00:00.000Z');
      await s.usage.record(call({ inputTokens: 2 }));
      await s.usage.record(call({ inputTokens: 4 }));
      Date.now = () => Date.parse('2025-02-28T12:00:00.000Z');
      await s.usage.record(call({ inputTokens: 8 }));
    } finally {
      Date.now = realNow;
    }
    const report = await s.usage.report();
    expect(report.days.map((d) => [d.day, d.inputTokens, d.calls])).toEqual([
      ['2025-02-28', 8, 1],
      ['2025-03-01', 1, 1],
      ['2025-03-02', 6, 2],
    ]);
    expect(report.totals).toMatchObject({ inputTokens: 15, calls: 4 });
    const march2 = await s.usage.report({ from: new Date('2025-03-02T00:00:00Z'), before: new Date('2025-03-03T00:00:00Z') });
    expect(march2.days.map((d) => d.day)).toEqual(['2025-03-02']);
    expect(march2.totals).toMatchObject({ inputTokens: 6, calls: 2 });
  });
}
