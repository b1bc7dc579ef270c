import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from 'grammy';
import { AsyncQueue, FaultBoundary, type TurnEvent } from '@switchboard/core';
import { DEFAULT_TELEGRAM_TOKEN, FakeChannelEnv, startFakeTelegram, type FakeTelegram } from '@switchboard/testkit';
import { ApprovalMessages } from '../src/approvals.js';
import { draftWithStatus } from '../src/draft-status.js';
import { TurnRenderer } from '../src/renderer.js';
import { Sender } from '../src/sender.js';

const TOKEN = DEFAULT_TELEGRAM_TOKEN;
const CHAT = 777;
let tg: FakeTelegram;
let sender: Sender;
let env: FakeChannelEnv;

beforeAll(async () => {
  tg = await startFakeTelegram();
  env = new FakeChannelEnv();
  sender = new Sender(new Api(TOKEN, { apiRoot: tg.apiRoot }), TOKEN, env.log);
});
afterAll(async () => {
  await tg.close();
  await env.close();
});

/** Starts a renderer on a live event queue; `editIntervalMs` is the draft throttle. */
async function renderLive(turnId: string, editIntervalMs: number, scrub?: (t: string) => string) {
  const to = { channel: 'telegram', account: 'main', id: String(CHAT), kind: 'dm' } as const;
  const ctx = env.contextFor({ type: 'telegram', account: 'main' });
  const deps = {
    sender,
    approvals: new ApprovalMessages(() => ctx, sender, env.log, TOKEN),
    log: env.log,
    token: TOKEN,
    typingIntervalMs: 60_000,
    editIntervalMs,
    faults: new FaultBoundary(env.log),
    channelId: 'telegram:main',
    ...(scrub ? { scrub } : {}),
  };
  const events = new AsyncQueue<TurnEvent>();
  const done = new TurnRenderer(deps, to, turnId, await ctx.ledger.begin(turnId, to), { clientId: null, resumed: false }).run(events);
  return { events, done };
}

const isDraftCall = (c: { method: string; params: unknown }) =>
  (c.method === 'sendMessage' || c.method === 'editMessageText') && (c.params as { parse_mode?: string }).parse_mode === undefined;

describe('TurnRenderer tool status lines', () => {
  it('a flood of progress reports inside one edit interval makes no extra edit; the final carries no status line', async () => {
    const since = tg.calls.length;
    // An interval no test run reaches: after the first draft, nothing but the final may edit.
    const { events, done } = await renderLive('ts1', 3_600_000, (t) => t.replaceAll('planted-secret-value', '[redacted]'));
    events.push({ type: 'text_delta', text: 'Let me check.' });
    events.push({ type: 'tool_start', toolUseId: 'u1', name: 'exec', input: { command: 'cat planted-secret-value.txt' }, readOnly: false });
    const first = await tg.waitForAnswered((c) => c.method === 'sendMessage' && c.status === 200, 5_000, since);
    const firstText = String((first.params as { text: string }).text);
    expect(firstText.startsWith('Let me check.')).toBe(true);
    expect(firstText).not.toContain('planted-secret-value');
    for (let i = 1; i <= 1000; i++) events.push({ type: 'tool_progress', toolUseId: 'u1', name: 'exec', message: `${i} lines so far`, lines: i });
    events.push({ type: 'tool_end', toolUseId: 'u1', name: 'exec', result: { type: 'tool_result', tool_use_id: 'u1', content: 'ok' } });
    events.push({ type: 'turn_end', state: 'completed', reason: 'completed', text: 'Let me check.\n\nAll **good**.' });
    events.close();
    await done;
    const calls = tg.calls.slice(since).filter((c) => c.method !== 'sendChatAction');
    // One draft send and one edit (the final): 1000 progress reports coalesced into nothing extra.
    expect(calls.map((c) => c.method)).toEqual(['sendMessage', 'editMessageText']);
    expect(calls.filter(isDraftCall)).toHaveLength(1);
    const [message] = tg.sent(TOKEN, CHAT).slice(-1);
    expect(message!.text).toBe('Let me check.\n\nAll good.');
    expect(message!.history.map((v) => v.text)).toEqual(['Let me check.\n\n🔧 exec cat [redacted].txt…', 'Let me check.\n\nAll good.']);
  });

  it('a status change after the interval is shown in the next draft edit, with the newest progress only', async () => {
    const since = tg.calls.length;
    const { events, done } = await renderLive('ts2', 50);
    events.push({ type: 'tool_start', toolUseId: 'u2', name: 'read_file', input: { path: 'notes.md' }, readOnly: true });
    await tg.waitForAnswered((c) => c.method === 'sendMessage' && String((c.params as { text: string }).text) === '🔧 read_file notes.md…', 5_000, since);
    events.push({ type: 'tool_end', toolUseId: 'u2', name: 'read_file', result: { type: 'tool_result', tool_use_id: 'u2', content: 'x', is_error: true } });
    await tg.waitForAnswered((c) => c.method === 'editMessageText' && String((c.params as { text: string }).text) === '❌ read_file notes.md', 5_000, since);
    events.push({ type: 'turn_end', state: 'completed', reason: 'completed', text: 'It is not there.' });
    events.close();
    await done;
    expect(tg.sent(TOKEN, CHAT).at(-1)!.text).toBe('It is not there.');
  });
});

describe('draftWithStatus', () => {
  it('keeps the status block visible under a text too long for one message', () => {
    const out = draftWithStatus('x'.repeat(10_000), '🔧 exec npm test…', 4096);
    expect(out.length).toBeLessThanOrEqual(4096);
    expect(out.endsWith('\n\n🔧 exec npm test…')).toBe(true);
    expect(draftWithStatus('', '✅ exec ls')).toBe('✅ exec ls');
    expect(draftWithStatus('  hi  ', '')).toBe('hi');
    expect(draftWithStatus('', '')).toBe('');
  });
});
