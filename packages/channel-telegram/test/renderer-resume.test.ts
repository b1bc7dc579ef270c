import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from 'grammy';
import type { NewDelivery, TurnEvent } from '@switchboard/core';
import { DEFAULT_TELEGRAM_TOKEN, FakeChannelEnv, startFakeTelegram, type FakeTelegram } from '@switchboard/testkit';
import { ApprovalMessages } from '../src/approvals.js';
import { chunkText } from '../src/chunk.js';
import { Sender } from '../src/sender.js';
import { TurnRenderer } from '../src/renderer.js';

const TOKEN = DEFAULT_TELEGRAM_TOKEN;
const CHAT = 555;
let tg: FakeTelegram;
let sender: Sender;
let api: Api;
/** The shared fake gateway: a real SQLite delivery ledger behind the context the renderer uses. */
let env: FakeChannelEnv;

beforeAll(async () => {
  tg = await startFakeTelegram();
  env = new FakeChannelEnv();
  api = new Api(TOKEN, { apiRoot: tg.apiRoot });
  sender = new Sender(api, TOKEN, env.log);
});
afterAll(async () => {
  await tg.close();
  await env.close();
});

/** A ledger row a previous process wrote. */
const row = (turnId: string, part: number, kind: 'draft' | 'final', id: number, text: string): NewDelivery => ({
  turnId,
  part,
  kind,
  channel: 'telegram',
  account: 'main',
  conversationId: String(CHAT),
  platformMessageId: String(id),
  content: { text },
});

async function seed(...rows: NewDelivery[]): Promise<void> {
  for (const r of rows) await env.seedDelivery(r);
}

async function render(turnId: string, events: TurnEvent[]): Promise<void> {
  const to = { channel: 'telegram', account: 'main', id: String(CHAT), kind: 'dm' } as const;
  const ctx = env.contextFor({ type: 'telegram', account: 'main' });
  const deps = {
    sender,
    approvals: new ApprovalMessages(() => ctx, sender, env.log, TOKEN),
    log: env.log,
    token: TOKEN,
    typingIntervalMs: 4000,
    editIntervalMs: 200,
  };
  async function* turn() {
    yield* events;
  }
  await new TurnRenderer(deps, to, turnId, await ctx.ledger.begin(turnId, to), {
    clientId: '1',
    resumed: true,
  }).run(turn());
}

const long = Array.from({ length: 150 }, (_, i) => `row ${i}: ${'0123456789'.repeat(5)}`).join('\n');
const end = (text: string): TurnEvent => ({ type: 'turn_end', state: 'completed', reason: 'completed', text });

describe('TurnRenderer on a resumed turn', () => {
  it('edits the recorded draft into the first chunk instead of sending a new draft', async () => {
    const draft = await api.sendMessage(CHAT, 'half an ans');
    await seed(row('t1', 0, 'draft', draft.message_id, 'half an ans'));
    const since = tg.calls.length;
    await render('t1', [{ type: 'attempt_reset', reason: 'resumed after restart' }, { type: 'text_delta', text: 'half an answer, again' }, end(long)]);
    const after = tg.calls.slice(since).filter((c) => c.method !== 'sendChatAction');
    const chunks = chunkText(long);
    expect(after.filter((c) => c.method === 'sendMessage')).toHaveLength(chunks.length - 1);
    const msgs = tg.sent(TOKEN, CHAT).filter((m) => m.message_id >= draft.message_id);
    expect(msgs.map((m) => m.text)).toEqual(chunks);
    expect(msgs[0]!.message_id).toBe(draft.message_id);
    expect((await env.ledger('t1')).filter((r) => r.kind === 'final').map((r) => r.part)).toEqual([0, 1, 2]);
  });

  it('skips final parts already in the ledger and leaves the draft holding part 0 alone', async () => {
    const chunks = chunkText(long);
    const first = await api.sendMessage(CHAT, chunks[0]!);
    await seed(row('t2', 0, 'draft', first.message_id, 'partial'), row('t2', 0, 'final', first.message_id, chunks[0]!));
    const since = tg.calls.length;
    await render('t2', [{ type: 'attempt_reset', reason: 'resumed after restart' }, { type: 'text_delta', text: 'streamed again' }, end(long)]);
    const after = tg.calls.slice(since).filter((c) => c.method !== 'sendChatAction');
    expect(after.map((c) => c.method)).toEqual(['sendMessage', 'sendMessage']);
    expect(after.map((c) => (c.params as { text: string }).text).join('\n')).not.toContain(chunks[0]!.slice(0, 40));
    const msgs = tg.sent(TOKEN, CHAT).filter((m) => m.message_id >= first.message_id);
    expect(msgs.map((m) => m.text)).toEqual(chunks);
    // Rendering the same turn once more sends nothing at all.
    const again = tg.calls.length;
    await render('t2', [end(long)]);
    expect(tg.calls.slice(again).filter((c) => c.method !== 'sendChatAction')).toHaveLength(0);
  });

  it('a steered turn sends nothing; an empty answer deletes the draft', async () => {
    const since = tg.calls.length;
    await render('t3', [{ type: 'turn_end', state: 'completed', reason: 'steered', text: '' }]);
    expect(tg.calls.slice(since).filter((c) => c.method !== 'sendChatAction')).toHaveLength(0);
    const draft = await api.sendMessage(CHAT, 'thinking…');
    await seed(row('t4', 0, 'draft', draft.message_id, 'thinking…'));
    await render('t4', [end('')]);
    expect(tg.sent(TOKEN, CHAT, { includeDeleted: true }).find((m) => m.message_id === draft.message_id)!.deleted).toBe(true);
  });
});
