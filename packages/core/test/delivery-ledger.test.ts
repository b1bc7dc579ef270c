import { describe, expect, it } from 'vitest';
import { DeliveryLedger, TurnFinishes, type ConversationRef, type DeliveryRecord, type DeliveryStore, type NewDelivery } from '../src/index.js';

const to: ConversationRef = { channel: 'telegram', account: 'main', id: '42', kind: 'dm' };

/** An in-memory store with the SQLite repository's semantics: idempotent on (turn, part, kind), ids in order. */
function memoryStore(rows: DeliveryRecord[] = []): DeliveryStore & { rows: DeliveryRecord[]; calls: string[] } {
  const calls: string[] = [];
  return {
    rows,
    calls,
    record: async (d: NewDelivery) => {
      calls.push(`record ${d.kind} ${d.part}`);
      const found = rows.find((r) => r.turnId === d.turnId && r.part === d.part && r.kind === d.kind);
      if (found) return { record: found, existed: true };
      const record = { ...d, id: rows.length + 1, createdAt: new Date() };
      rows.push(record);
      return { record, existed: false };
    },
    ofTurn: async (turnId) => rows.filter((r) => r.turnId === turnId),
    finalsSince: async (channel, account, conversationId, cursor) => {
      calls.push(`finalsSince ${channel} ${account} ${conversationId} ${cursor}`);
      return rows.filter((r) => r.kind === 'final' && r.channel === channel && r.account === account && r.conversationId === conversationId && r.id > cursor);
    },
  };
}

describe('DeliveryLedger', () => {
  it('records drafts and finals as rows of its channel account, and a new begin sees them (resume)', async () => {
    const store = memoryStore();
    const ledger = new DeliveryLedger(store, { channel: 'telegram', account: 'main' });
    const first = await ledger.begin('t1', to);
    expect(first.finals.size).toBe(0);
    expect(first.drafts.size).toBe(0);
    await first.recordDraft(0, '7', { text: 'half' });
    const w = await first.recordFinal(0, '7', { text: 'whole', state: 'completed', reason: 'completed' });
    expect(w.existed).toBe(false);
    expect(store.rows).toEqual([
      expect.objectContaining({ turnId: 't1', part: 0, kind: 'draft', channel: 'telegram', account: 'main', conversationId: '42', platformMessageId: '7' }),
      expect.objectContaining({
        turnId: 't1',
        part: 0,
        kind: 'final',
        channel: 'telegram',
        account: 'main',
        conversationId: '42',
        content: expect.objectContaining({ text: 'whole' }),
      }),
    ]);
    // The maps include what this render recorded.
    expect([...first.finals.keys()]).toEqual([0]);
    expect(first.drafts.get(0)?.platformMessageId).toBe('7');

    const resumed = await ledger.begin('t1', to);
    expect(resumed.finals.get(0)?.content.text).toBe('whole');
    expect(resumed.drafts.get(0)?.platformMessageId).toBe('7');
    expect((await ledger.begin('other', to)).finals.size).toBe(0);
  });

  it('keeps the first record of a part: a repeat answers existed with the stored row', async () => {
    const store = memoryStore();
    const turn = await new DeliveryLedger(store, { channel: 'websocket', account: 'default' }).begin('t2', to);
    const a = await turn.recordFinal(0, null, { text: 'first' });
    const b = await turn.recordFinal(0, null, { text: 'second' });
    expect(b).toEqual({ record: a.record, existed: true });
    expect(store.rows).toHaveLength(1);
    expect(turn.finals.get(0)?.content.text).toBe('first');
  });

  it('keeps other draft parts apart from the streaming draft (Slack approval messages)', async () => {
    const store = memoryStore();
    const ledger = new DeliveryLedger(store, { channel: 'slack', account: 'team' });
    const turn = await ledger.begin('t3', to);
    await turn.recordDraft(0, '1.0', { text: '' });
    await turn.recordDraft(1, '1.1', { text: 'approve?', reason: 'approval:a1' });
    await turn.recordDraft(2, '1.2', { text: 'approve?', reason: 'approval:a2' });
    const again = await ledger.begin('t3', to);
    expect([...again.drafts.keys()]).toEqual([0, 1, 2]);
    expect(again.drafts.get(2)?.content.reason).toBe('approval:a2');
    expect(again.finals.size).toBe(0);
  });

  it('replays finals since a cursor for its own channel account only', async () => {
    const store = memoryStore();
    const ledger = new DeliveryLedger(store, { channel: 'telegram', account: 'main' });
    const turn = await ledger.begin('t4', to);
    const { record } = await turn.recordFinal(0, null, { text: 'one' });
    await (await ledger.begin('t5', to)).recordFinal(0, null, { text: 'two' });
    await (await new DeliveryLedger(store, { channel: 'telegram', account: 'other' }).begin('t6', to)).recordFinal(0, null, { text: 'elsewhere' });
    expect((await ledger.finalsSince('42', 0)).map((r) => r.content.text)).toEqual(['one', 'two']);
    expect((await ledger.finalsSince('42', record.id)).map((r) => r.content.text)).toEqual(['two']);
    expect(store.calls).toContain(`finalsSince telegram main 42 ${record.id}`);
  });

  it('a failed read rejects begin, or with onReadError is reported and starts the turn empty', async () => {
    const store = memoryStore();
    const boom = new Error('disk I/O error');
    store.ofTurn = async () => {
      throw boom;
    };
    const ledger = new DeliveryLedger(store, { channel: 'telegram', account: 'main' });
    await expect(ledger.begin('t7', to)).rejects.toBe(boom);
    const seen: unknown[] = [];
    const turn = await ledger.begin('t7', to, { onReadError: (err) => seen.push(err) });
    expect(seen).toEqual([boom]);
    expect(turn.finals.size).toBe(0);
    await turn.recordFinal(0, null, { text: 'still recorded' });
    expect(store.rows).toHaveLength(1);
  });
});

describe('DeliveryLedger: the last final part with the turn end', () => {
  it('hands the last final part of a turn being finished to its finish, once; other parts are recorded on their own', async () => {
    const store = memoryStore();
    const finishes = new TurnFinishes();
    const joined: NewDelivery[] = [];
    finishes.expect('t1', async (d) => {
      joined.push(d);
      return store.record(d);
    });
    const ledger = new DeliveryLedger(store, { channel: 'telegram', account: 'main' }, finishes);
    const turn = await ledger.begin('t1', to);
    await turn.recordDraft(0, '7', { text: '…' });
    await turn.recordFinal(0, '7', { text: 'part one' });
    await turn.recordFinal(1, '8', { text: 'part two' }, { last: true });
    // Taken once: a second "last" (a confused channel) is an ordinary record.
    await turn.recordFinal(1, '8', { text: 'part two' }, { last: true });
    expect(joined.map((d) => [d.kind, d.part])).toEqual([['final', 1]]);
    expect(turn.finals.get(1)?.platformMessageId).toBe('8');
    // A turn nobody waits for (a steered message's end, or after close) records plainly.
    finishes.expect('t2', async () => {
      throw new Error('must not be called');
    });
    finishes.close('t2');
    const other = await ledger.begin('t2', to);
    await expect(other.recordFinal(0, null, { text: 'steered' }, { last: true })).resolves.toMatchObject({ existed: false });
  });
});
