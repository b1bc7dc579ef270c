import { openSqliteStorage } from '@switchboard/store';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BudgetGate, BudgetService, type BudgetSettings, type BudgetTurn, type NewUsageRecord, type Storage } from '../../src/index.js';

const log = pino({ level: 'silent' });

const row = (tokens: number, over: Partial<NewUsageRecord> = {}): NewUsageRecord => ({
  turnId: 't0',
  sessionId: 's0',
  principalId: 'p1',
  agentId: 'default',
  channel: 'websocket:default',
  model: 'm',
  inputTokens: tokens,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  costUsd: tokens / 1000,
  ...over,
});

let storage: Storage & { close(): void };
let principalId: string;

beforeEach(async () => {
  storage = openSqliteStorage({ file: ':memory:' });
  principalId = (await storage.principals.create({ name: 'mia', role: 'member' })).id;
});
afterEach(() => storage.close());

function setup(settings: Partial<BudgetSettings>, now?: () => Date) {
  const budgets = new BudgetService({
    settings: { timezone: 'UTC', agents: new Map(), roles: new Map(), principals: new Map(), ...settings },
    storage,
    log,
    ...(now ? { now } : {}),
  });
  const exceeded: unknown[] = [];
  const gate = new BudgetGate({ budgets, audit: storage.audit, principals: storage.principals, onExceeded: async (_t, d) => void exceeded.push(d) });
  const notes: string[] = [];
  const pending: NewUsageRecord[] = [];
  const turn: BudgetTurn = {
    turnId: 't1',
    sessionId: 's1',
    agentId: 'default',
    principalId,
    pendingCalls: () => pending,
    notify: async (text) => void notes.push(text),
    log,
  };
  return { budgets, gate, turn, notes, pending, exceeded };
}

const info = (call: number) => ({ call, model: 'm', signal: new AbortController().signal });

describe('BudgetGate', () => {
  it('without a budget no check runs at all', async () => {
    const { gate, turn } = setup({});
    expect(await gate.forTurn(turn)).toBeUndefined();
  });

  it('warns the person once at 80% of a limit, then refuses at the limit with which limit and when it resets', async () => {
    const { gate, turn, notes, exceeded } = setup({ roles: new Map([['member', { day: { tokens: 1000 } }]]) });
    const check = (await gate.forTurn(turn))!;
    await storage.usage.record(row(799, { principalId }));
    expect(await check(info(0))).toBeNull();
    expect(notes).toEqual([]);
    await storage.usage.record(row(1, { principalId }));
    expect(await check(info(0))).toBeNull();
    expect(await check(info(1))).toBeNull();
    // Another turn of the same person in the same day: still only the one warning.
    expect(await (await gate.forTurn({ ...turn, turnId: 't2' }))!(info(0))).toBeNull();
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^Heads-up: 80% of your daily token budget \(role member\) \(1,000 tokens\) is used\. It resets at \d{4}-\d{2}-\d{2} 00:00 UTC\.$/,
    );
    // Another person's spend does not count against this one's budget.
    await storage.usage.record(row(5000, { principalId: 'p_other' }));
    expect(await check(info(0))).toBeNull();
    await storage.usage.record(row(200, { principalId }));
    const refused = await check(info(0));
    expect(refused).toMatchObject({ reason: 'budget_exceeded' });
    expect(refused!.error).toMatch(
      /^Your message was not answered: your daily token budget \(role member\) of 1,000 tokens is used up \(1,000 tokens spent\)\. It resets at \d{4}-\d{2}-\d{2} 00:00 UTC\.$/,
    );
    expect(exceeded).toEqual([
      expect.objectContaining({ scope: 'role', id: 'member', period: 'day', kind: 'tokens', limit: 1000, spent: 1000, atStart: true }),
    ]);
    const audit = await storage.audit.list({ action: 'budget.exceeded' });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'gateway', target: 't1', detail: { principalId, sessionId: 's1', agentId: 'default' } });
  });

  it("counts the running turn's calls not stored yet, and a refusal after a call says the answer stopped", async () => {
    const { gate, turn, pending } = setup({ principals: new Map([['placeholder', {}]]), agents: new Map([['default', { day: { usd: 1 } }]]) });
    const check = (await gate.forTurn(turn))!;
    await storage.usage.record(row(600, { principalId: 'someone-else' }));
    expect(await check(info(0))).toBeNull();
    pending.push(row(400, { principalId }));
    const r = await check(info(1));
    expect(r!.error).toMatch(/^The answer stopped here: the agent default's daily USD budget of \$1\.00 is used up \(\$1\.00 spent\)\./);
  });

  it('the narrowest exceeded limit is named: a principal override replaces the role default and a monthly limit also blocks', async () => {
    const { gate, turn, budgets } = setup({ roles: new Map([['member', { day: { tokens: 10 } }]]), gateway: { month: { tokens: 1_000_000 } } });
    await budgets.set('principal', principalId, { month: { tokens: 50 } }, 'operator:test');
    const check = (await gate.forTurn(turn))!;
    await storage.usage.record(row(20, { principalId }));
    // Over the role's daily 10 but the principal's own budget (monthly 50) replaces it.
    expect(await check(info(0))).toBeNull();
    await storage.usage.record(row(30, { principalId }));
    expect((await check(info(0)))!.error).toContain('your monthly token budget of 50 tokens is used up');
    // An override removed: back to the role's default.
    await budgets.set('principal', principalId, {}, 'operator:test');
    expect((await check(info(0)))!.error).toContain('your daily token budget (role member) of 10 tokens');
    expect(await storage.budgets.list()).toEqual([]);
  });

  it('warns once per limit and period: again in the next day, once', async () => {
    // The spend read has no upper bound, so rows stored now count in "yesterday" as seen by a clock one day behind.
    const today = new Date();
    let now = new Date(today.getTime() - 86_400_000);
    const { gate, turn, notes } = setup({ roles: new Map([['member', { day: { tokens: 100 } }]]) }, () => now);
    await storage.usage.record(row(90, { principalId }));
    const check = (await gate.forTurn(turn))!;
    await check(info(0));
    await check(info(1));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain(`It resets at ${today.toISOString().slice(0, 10)} 00:00 UTC`);
    now = today;
    await check(info(0));
    await check(info(1));
    expect(notes).toHaveLength(2);
    expect(notes[1]).toContain('90% of your daily token budget');
    expect(notes[1]).not.toContain(`It resets at ${today.toISOString().slice(0, 10)} 00:00`);
  });

  it('a failing spend read is logged and the call goes on', async () => {
    const { gate, turn, exceeded } = setup({ roles: new Map([['member', { day: { tokens: 1 } }]]) });
    // A logger that records what the gate logs.
    const lines: { level: number; msg: string; err?: { message?: string } }[] = [];
    const recording = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const check = (await gate.forTurn({ ...turn, log: recording }))!;
    // Spent over the limit: a read that worked would refuse the call.
    await storage.usage.record(row(5, { principalId }));
    storage.close();
    expect(await check(info(0))).toBeNull();
    expect(exceeded).toEqual([]);
    const errors = lines.filter((l) => l.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toBe('budget check failed; the call goes on');
    expect(errors[0]!.err?.message).toBeTruthy();
  });

  it('the same spend over the limit, read without a failure, refuses the call (the control of the test above)', async () => {
    const { gate, turn } = setup({ roles: new Map([['member', { day: { tokens: 1 } }]]) });
    const check = (await gate.forTurn(turn))!;
    await storage.usage.record(row(5, { principalId }));
    expect((await check(info(0)))!.error).toContain('daily token budget (role member) of 1 tokens');
  });
});
