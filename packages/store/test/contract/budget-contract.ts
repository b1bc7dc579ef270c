import { expect, it } from 'vitest';
import { type StorageRef, usageCall } from './fixtures.js';

const call = usageCall;

/** Budget overrides (one per scope and id) and the spend budgets read from the usage rows. */
export function budgetContract(store: StorageRef): void {
  it('stores one override per scope and id, replaces it on a second set, removes it with null', async () => {
    const s = store();
    expect(await s.budgets.list()).toEqual([]);
    await s.budgets.set('role', 'member', { day: { tokens: 5000 } }, 'operator:a');
    await s.budgets.set('gateway', '', { month: { usd: 100 } }, 'operator:a');
    await s.budgets.set('role', 'member', { day: { tokens: 9000 }, month: { usd: 1.5 } }, 'operator:b');
    await s.budgets.set('principal', '__proto__', { day: { usd: 2 } }, 'operator:a');
    const list = await s.budgets.list();
    expect(list.map((o) => [o.scope, o.id, o.spec, o.updatedBy])).toEqual([
      ['gateway', '', { month: { usd: 100 } }, 'operator:a'],
      ['principal', '__proto__', { day: { usd: 2 } }, 'operator:a'],
      ['role', 'member', { day: { tokens: 9000 }, month: { usd: 1.5 } }, 'operator:b'],
    ]);
    expect(list[0]!.updatedAt).toBeInstanceOf(Date);
    await s.budgets.set('role', 'member', null, 'operator:a');
    await s.budgets.set('agent', 'never-set', null, 'operator:a');
    expect((await s.budgets.list()).map((o) => o.scope)).toEqual(['gateway', 'principal']);
  });

  it('sums tokens (input + output + cache read + cache write) and USD since the day and the month start, per principal, agent or everyone', async () => {
    const s = store();
    const past = new Date(Date.now() - 86_400_000);
    const future = new Date(Date.now() + 86_400_000);
    const none = { tokens: 0, usd: 0 };
    expect(await s.usage.spend({}, { day: past, month: past })).toEqual({ day: none, month: none });
    await s.usage.record(call());
    await s.usage.record(call({ principalId: 'p2', agentId: 'other', inputTokens: 1000, costUsd: 0.5 }));
    await s.usage.record(call({ principalId: null, costUsd: 0.25 }));
    const one = { tokens: 135, usd: 0.001 };
    expect(await s.usage.spend({ principalId: 'p1' }, { day: past, month: past })).toEqual({ day: one, month: one });
    // Rows before the day's start count in the month only.
    expect(await s.usage.spend({ principalId: 'p1' }, { day: future, month: past })).toEqual({ day: none, month: one });
    expect(await s.usage.spend({ agentId: 'main' }, { day: past, month: past })).toEqual({
      day: { tokens: 270, usd: 0.251 },
      month: { tokens: 270, usd: 0.251 },
    });
    expect(await s.usage.spend({}, { day: past, month: past })).toEqual({ day: { tokens: 1395, usd: 0.751 }, month: { tokens: 1395, usd: 0.751 } });
    expect(await s.usage.spend({ principalId: 'nobody' }, { day: past, month: past })).toEqual({ day: none, month: none });
    expect(await s.usage.spend({}, { day: future, month: future })).toEqual({ day: none, month: none });
  });

  it('lists the rows stored after a sequence number in insertion order, and sums only through a given one', async () => {
    const s = store();
    const start = await s.usage.changes(null);
    expect(start).toEqual({ rows: [], last: expect.any(Number) });
    await s.usage.record(call({ inputTokens: 1 }));
    await s.usage.record(call({ inputTokens: 2, principalId: null, agentId: 'other' }));
    const first = await s.usage.changes(start.last);
    expect(first.rows.map((r) => [r.tokens, r.principalId, r.agentId, r.usd])).toEqual([
      [126, 'p1', 'main', 0.001],
      [127, null, 'other', 0.001],
    ]);
    expect(first.rows[0]!.createdAt).toBeInstanceOf(Date);
    expect(first.rows[1]!.seq).toBeGreaterThan(first.rows[0]!.seq);
    expect(first.last).toBe(first.rows[1]!.seq);
    expect((await s.usage.changes(start.last, 1)).rows).toHaveLength(1);
    expect(await s.usage.changes(first.last)).toEqual({ rows: [], last: first.last });
    const past = new Date(Date.now() - 86_400_000);
    expect((await s.usage.spend({}, { day: past, month: past }, first.rows[0]!.seq)).day.tokens).toBe(126);
    expect((await s.usage.spend({}, { day: past, month: past }, first.last)).day.tokens).toBe(253);
  });
}
