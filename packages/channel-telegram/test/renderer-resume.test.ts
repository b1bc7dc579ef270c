import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from 'grammy';
import { pino } from 'pino';
import { DeliveryLedger, type ChannelContext, type DeliveryRecord, type DeliveryStore, type NewDelivery, type TurnEvent } from '@switchboard/core';
import { DEFAULT_TELEGRAM_TOKEN, startFakeTelegram, type FakeTelegram } from '@switchboard/testkit';
import { ApprovalMessages } from '../src/approvals.js';
import { chunkText } from '../src/chunk.js';
import { Sender } from '../src/sender.js';
import { TurnRenderer } from '../src/renderer.js';

const TOKEN = DEFAULT_TELEGRAM_TOKEN;
const CHAT = 555;
const log = pino({ level: 'silent' });
let tg: FakeTelegram;
let sender: Sender;
let api: Api;

beforeAll(async () => {
  tg = await startFakeTelegram();
  api = new Api(TOKEN, { apiRoot: tg.apiRoot });
  sender = new Sender(api, TOKEN, log);
});
afterAll(async () => {
  await tg.close();
});

/** An in-memory delivery store (idempotent on turn, part and kind, like the SQLite one) under the core DeliveryLedger. */
function memoryLedger(rows: DeliveryRecord[]): DeliveryLedger {
  const store: DeliveryStore = {
    record: async (d: NewDelivery) => {
      const found = rows.find((r) => r.turnId === d.turnId && r.part === d.part && r.kind === d.kind);
      if (found) return { record: found, existed: true };
      const record = { ...d, id: rows.length + 1, createdAt: new Date() };
      rows.push(record);
      return { record, existed: false };
    },
    ofTurn: async (turnId: string) => rows.filter((r) => r.turnId === turnId),
    finalsSince: async () => [],
  };
  return new DeliveryLedger(store, { channel: 'telegram', account: 'main' });
}

const row = (turnId: string, part: number, kind: 'draft' | 'final', id: number, text: string): DeliveryRecord => ({
  turnId,
  part,
  kind,
  channel: 'telegram',
  account: 'main',
  conversationId: String(CHAT),
  platformMessageId: String(id),
  content: { text },
  id: 0,
  createdAt: new Date(),
});

async function render(turnId: string, rows: DeliveryRecord[], events: TurnEvent[]): Promise<void> {
  const to = { channel: 'telegram', account: 'main', id: String(CHAT), kind: 'dm' } as const;
  const deps = {
    sender,
    // No button is pressed in these tests: the approvals never reach the context.
    approvals: new ApprovalMessages(() => ({}) as ChannelContext, sender, log, TOKEN),
    log,
    token: TOKEN,
    typingIntervalMs: 4000,
    editIntervalMs: 200,
  };
  async function* turn() {
    yield* events;
  }
  await new TurnRenderer(deps, to, turnId, await memoryLedger(rows).begin(turnId, to), {
    clientId: '1',
    resumed: true,
  }).run(turn());
}

const long = Array.from({ length: 150 }, (_, i) => `row ${i}: ${'0123456789'.repeat(5)}`).join('\n');
const end = (text: string): TurnEvent => ({ type: 'turn_end', state: 'completed', reason: 'completed', text });

describe('TurnRenderer on a resumed turn', () => {
  it('edits the recorded draft into the first chunk instead of sending a new draft', async () => {
    const draft = await api.sendMessage(CHAT, 'half an ans');
    const rows = [row('t1', 0, 'draft', draft.message_id, 'half an ans')];
    const since = tg.calls.length;
    await render('t1', rows, [{ type: 'attempt_reset', reason: 'resumed after restart' }, { type: 'text_delta', text: 'half an answer, again' }, end(long)]);
    const after = tg.calls.slice(since).filter((c) => c.method !== 'sendChatAction');
    const chunks = chunkText(long);
    expect(after.filter((c) => c.method === 'sendMessage')).toHaveLength(chunks.length - 1);
    const msgs = tg.sent(TOKEN, CHAT).filter((m) => m.message_id >= draft.message_id);
    expect(msgs.map((m) => m.text)).toEqual(chunks);
    expect(msgs[0]!.message_id).toBe(draft.message_id);
    expect(rows.filter((r) => r.kind === 'final').map((r) => r.part)).toEqual([0, 1, 2]);
  });

  it('skips final parts already in the ledger and leaves the draft holding part 0 alone', async () => {
    const chunks = chunkText(long);
    const first = await api.sendMessage(CHAT, chunks[0]!);
    const rows = [row('t2', 0, 'draft', first.message_id, 'partial'), row('t2', 0, 'final', first.message_id, chunks[0]!)];
    const since = tg.calls.length;
    await render('t2', rows, [{ type: 'attempt_reset', reason: 'resumed after restart' }, { type: 'text_delta', text: 'streamed again' }, end(long)]);
    const after = tg.calls.slice(since).filter((c) => c.method !== 'sendChatAction');
    expect(after.map((c) => c.method)).toEqual(['sendMessage', 'sendMessage']);
    expect(after.map((c) => (c.params as { text: string }).text).join('\n')).not.toContain(chunks[0]!.slice(0, 40));
    const msgs = tg.sent(TOKEN, CHAT).filter((m) => m.message_id >= first.message_id);
    expect(msgs.map((m) => m.text)).toEqual(chunks);
    // Rendering the same turn once more sends nothing at all.
    const again = tg.calls.length;
    await render('t2', rows, [end(long)]);
    expect(tg.calls.slice(again).filter((c) => c.method !== 'sendChatAction')).toHaveLength(0);
  });

  it('a steered turn sends nothing; an empty answer deletes the draft', async () => {
    const since = tg.calls.length;
    await render('t3', [], [{ type: 'turn_end', state: 'completed', reason: 'steered', text: '' }]);
    expect(tg.calls.slice(since).filter((c) => c.method !== 'sendChatAction')).toHaveLength(0);
    const draft = await api.sendMessage(CHAT, 'thinking…');
    await render('t4', [row('t4', 0, 'draft', draft.message_id, 'thinking…')], [end('')]);
    expect(tg.sent(TOKEN, CHAT, { includeDeleted: true }).find((m) => m.message_id === draft.message_id)!.deleted).toBe(true);
  });
});
