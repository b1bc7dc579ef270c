import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeAnthropic } from '@switchboard/testkit';
import { ALICE, control, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// A BudgetExceeded HTTP hook: records every payload it gets.
let hookServer: Server;
let hookPort = 0;
const hookSeen: Array<Record<string, unknown>> = [];
const hookWaiters: Array<() => void> = [];
const DAILY = 5_000;
/** The gateway's config beyond the Telegram account: filled in once the hook server listens. */
const config: Record<string, unknown> = { budgets: { roles: { member: { day: { tokens: DAILY } } } } };

beforeAll(async () => {
  hookServer = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      hookSeen.push(JSON.parse(raw) as Record<string, unknown>);
      for (const w of hookWaiters.splice(0)) w();
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
  hookPort = (hookServer.address() as { port: number }).port;
  config.hooks = { BudgetExceeded: [{ type: 'http', url: `http://127.0.0.1:${hookPort}/hook` }] };
});
afterAll(async () => {
  await new Promise<void>((r) => hookServer.close(() => r()));
});

// Registered after the hook server's beforeAll: the config has the hook's port when the gateway starts.
const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] }, config);

/** Tokens as budgets count them, summed over the fake's reported usage of its /v1/messages requests. */
function fakeTotals(model: FakeAnthropic) {
  let tokens = 0;
  const sums = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
  for (const r of model.requests) {
    if (r.path !== '/v1/messages' || !r.usage) continue;
    sums.inputTokens += r.usage.input_tokens;
    sums.outputTokens += r.usage.output_tokens;
    sums.cacheReadInputTokens += r.usage.cache_read_input_tokens;
    sums.cacheCreationInputTokens += r.usage.cache_creation_input_tokens;
    tokens += r.usage.input_tokens + r.usage.output_tokens + r.usage.cache_read_input_tokens + r.usage.cache_creation_input_tokens;
  }
  return { tokens, sums };
}

const say = (text: string) => env.tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text });

/** Waits until `n` turns have finished (their usage rows are stored with the turn's end). */
const finishedTurns = (n: number) => env.gw.waitForLog(() => env.gw.logs().filter((l) => l.includes('"turn finished"')).length >= n, 20_000);

/** The next UTC midnight as the refusal names it. */
function nextUtcMidnight(): string {
  const d = new Date();
  const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1));
  return `${next.toISOString().slice(0, 10)} 00:00 UTC`;
}

describe('budgets (acceptance 5)', () => {
  it('a member with a 5,000-token daily budget is answered until it is spent, then refused with the limit and its reset; an operator raises it and the member goes on; /usage and GET /usage agree with the fake', async () => {
    const { tg, model, gw } = env;
    // The member's budget is the member role's default from the config.
    expect((await control(gw, 'GET', '/budgets')).json).toEqual({ gateway: {}, agents: {}, roles: { member: { day: { tokens: DAILY } } }, principals: {} });

    // Turns go through while the day's spend is under the budget.
    let answered = 0;
    let refusal = '';
    let finished = 0;
    // Checks that saw the spend in [80%, 100%) of the budget: each would warn, but only the first does.
    // The message size puts a check in the band: turns of ~1.3k, 1.5k, 1.6k tokens (the history grows)
    // leave ~1.3k, 2.8k, then ~4.4k spent before the fourth turn's check, 400 tokens inside either edge.
    let inWarningBand = 0;
    for (let i = 1; i <= 20 && !refusal; i++) {
      const spentBefore = fakeTotals(model).tokens;
      const calls = model.requests.length;
      const since = tg.calls.length;
      say(`message number ${i} ${'x'.repeat(160)}`);
      const reply = await tg.waitForAnswered(
        (c) =>
          c.seq > since &&
          (c.method === 'sendMessage' || c.method === 'editMessageText') &&
          c.status === 200 &&
          params(c).chat_id === ALICE.dm.id &&
          (String(params(c).text).includes(`echo: message number ${i}`) || String(params(c).text).includes('not answered')),
        20_000,
      );
      await finishedTurns(++finished);
      const text = String(params(reply).text);
      if (text.includes('not answered')) {
        refusal = text;
        // Refused before any model call, because the spend had reached the budget.
        expect(model.requests.length).toBe(calls);
        expect(spentBefore).toBeGreaterThanOrEqual(DAILY);
      } else {
        answered++;
        expect(spentBefore).toBeLessThan(DAILY);
        if (spentBefore >= DAILY * 0.8) inWarningBand++;
      }
    }
    expect(answered).toBeGreaterThan(0);
    const warnings = tg.calls.filter(
      (c) => c.method === 'sendMessage' && c.status === 200 && params(c).chat_id === ALICE.dm.id && String(params(c).text).startsWith('Heads-up: '),
    );
    expect(inWarningBand).toBeGreaterThan(0);
    expect(warnings).toHaveLength(1);
    expect(String(params(warnings[0]!).text)).toMatch(/^Heads-up: \d+% of your daily token budget \(role member\) \(5,000 tokens\) is used\./);
    expect(refusal).toContain('daily token budget (role member) of 5,000 tokens');
    expect(refusal).toContain(`It resets at ${nextUtcMidnight()}`);

    // Audited, logged as a warning and sent to the BudgetExceeded hook.
    const audit = await control(gw, 'GET', '/audit?action=budget.exceeded');
    expect(audit.json.entries).toHaveLength(1);
    expect(audit.json.entries[0].detail).toMatchObject({ scope: 'role', id: 'member', period: 'day', kind: 'tokens', limit: DAILY, atStart: true });
    const warn = await gw.waitForLog((l) => l.includes('"event":"budget_exceeded"'));
    expect(JSON.parse(warn).level).toBe(40);
    if (hookSeen.length === 0)
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the BudgetExceeded hook was not called within 10 s')), 10_000);
        hookWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    expect(hookSeen[0]).toMatchObject({ hookEvent: 'BudgetExceeded', scope: 'role', id: 'member', period: 'day', kind: 'tokens', limit: DAILY });

    // An operator raises the budget through the control API (audited); the member goes on.
    const raised = await control(gw, 'PUT', '/budgets/role/member', { day: { tokens: 10_000_000 } });
    expect(raised.status).toBe(200);
    const effective = await control(gw, 'GET', '/budgets');
    expect(effective.json).toEqual({ gateway: {}, agents: {}, roles: { member: { day: { tokens: 10_000_000 } } }, principals: {} });
    const set = await control(gw, 'GET', '/audit?action=budget.set');
    expect(set.json.entries[0]).toMatchObject({ action: 'budget.set', target: 'role:member', detail: { budget: { day: { tokens: 10_000_000 } } } });
    expect(set.json.entries[0].actor).toMatch(/^operator:/);
    say('and now?');
    await waitForText(tg, ALICE.dm.id, 'echo: and now?', 20_000);
    await finishedTurns(++finished);

    // /usage and GET /api/v1/usage agree with the sum of the fake's reported usage.
    const { tokens, sums } = fakeTotals(model);
    const report = await control(gw, 'GET', '/usage?channel=telegram:main');
    expect(report.json.totals).toMatchObject(sums);
    const since = tg.calls.length;
    say('/usage');
    const usage = String(params(await waitForText(tg, ALICE.dm.id, 'Your usage:', 15_000, since)).text);
    expect(usage).toContain(
      `Today: ${tokens.toLocaleString('en-US')} tokens, $${report.json.totals.costUsd.toFixed(4)} of budget 10,000,000 tokens (role member); resets ${nextUtcMidnight()}`,
    );
    expect(usage).toMatch(new RegExp(`This month: ${tokens.toLocaleString('en-US')} tokens, .* of no budget; resets \\d{4}-\\d{2}-01 00:00 UTC`));
  });

  it('a turn that crosses the budget mid-way finishes its model call, then ends with a note instead of the next call', async () => {
    const { tg, model, gw } = env;
    // A budget one token above today's spend: the turn starts under it, its first call crosses it.
    const spent = fakeTotals(model).tokens;
    const put = await control(gw, 'PUT', '/budgets/role/member', { day: { tokens: spent + 1 } });
    expect(put.status).toBe(200);
    const calls = model.requests.length;
    model.enqueue({ toolUses: [{ name: 'list_files', input: {}, id: 'toolu_budget_cross' }] }, { text: 'never sent' });
    const since = tg.calls.length;
    say('list my files please');
    const note = String(params(await waitForText(tg, ALICE.dm.id, 'The answer stopped here', 20_000, since)).text);
    expect(note).toContain(`daily token budget (role member) of ${(spent + 1).toLocaleString('en-US')} tokens is used up`);
    // Exactly one model call: the one that crossed the limit; the next was refused by the check.
    expect(model.requests.length).toBe(calls + 1);
    const audit = await control(gw, 'GET', '/audit?action=budget.exceeded');
    expect(audit.json.entries[0].detail).toMatchObject({ atStart: false, limit: spent + 1 });
  });

  it('PUT /budgets validates its body and path, naming the field, and needs the admin scope', async () => {
    const { gw } = env;
    const bad = await control(gw, 'PUT', '/budgets/role/member', { day: { tokens: -1 } });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain('day/tokens');
    const empty = await control(gw, 'PUT', '/budgets/agent/default', { month: {} });
    expect(empty.status).toBe(400);
    expect(empty.json.message).toContain('month');
    const extra = await control(gw, 'PUT', '/budgets/gateway/-', { week: { tokens: 1 } });
    expect(extra.status).toBe(400);
    expect(extra.json.message).toContain('week');
    expect((await control(gw, 'PUT', '/budgets/role/overlord', { day: { tokens: 1 } })).status).toBe(400);
    expect((await control(gw, 'PUT', '/budgets/agent/nope', { day: { tokens: 1 } })).status).toBe(404);
    expect((await control(gw, 'PUT', '/budgets/principal/p_nobody', { day: { tokens: 1 } })).status).toBe(404);
    expect((await control(gw, 'PUT', '/budgets/planet/x', { day: { tokens: 1 } })).status).toBe(400);
  });
});
