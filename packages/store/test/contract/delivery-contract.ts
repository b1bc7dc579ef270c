import type { NewDelivery } from '@switchboard/core';
import { expect, it } from 'vitest';
import type { StorageRef } from './fixtures.js';

const part = (turnId: string, n: number, kind: 'draft' | 'final', conversationId = 'conv-1'): NewDelivery => ({
  turnId,
  part: n,
  kind,
  channel: 'websocket',
  account: 'default',
  conversationId,
  platformMessageId: kind === 'draft' ? `msg-${turnId}-${n}` : null,
  content: { text: `${kind} ${turnId}#${n}`, state: 'completed', clientId: 'c1' },
});

/** The delivery ledger. */
export function deliveryContract(store: StorageRef): void {
  it('record is idempotent on (turn, part, kind)', async () => {
    const s = store();
    const first = await s.deliveries.record(part('t1', 0, 'final'));
    expect(first.existed).toBe(false);
    expect(first.record).toMatchObject(part('t1', 0, 'final'));
    expect(first.record.createdAt).toBeInstanceOf(Date);
    const again = await s.deliveries.record({ ...part('t1', 0, 'final'), content: { text: 'other' } });
    expect(again).toEqual({ record: first.record, existed: true });

    const draft = await s.deliveries.record(part('t1', 0, 'draft'));
    const next = await s.deliveries.record(part('t1', 1, 'final'));
    expect(draft.existed || next.existed).toBe(false);
    expect(new Set([first.record.id, draft.record.id, next.record.id]).size).toBe(3);
    expect(await s.deliveries.ofTurn('t1')).toEqual([first.record, draft.record, next.record]);
    expect(await s.deliveries.ofTurn('none')).toEqual([]);
  });

  it('ledger ids increase monotonically', async () => {
    const s = store();
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await s.deliveries.record(part(`t${i}`, 0, 'final'))).record.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(new Set(ids).size).toBe(5);
  });

  it('finalsSince replays final parts of one conversation after a cursor, in order', async () => {
    const s = store();
    const a0 = (await s.deliveries.record(part('ta', 0, 'final'))).record;
    await s.deliveries.record(part('ta', 1, 'draft'));
    await s.deliveries.record(part('tx', 0, 'final', 'conv-2'));
    await s.deliveries.record({ ...part('ty', 0, 'final'), account: 'other' });
    await s.deliveries.record({ ...part('tz', 0, 'final'), channel: 'telegram' });
    const a1 = (await s.deliveries.record(part('ta', 1, 'final'))).record;
    const b0 = (await s.deliveries.record(part('tb', 0, 'final'))).record;

    expect(await s.deliveries.finalsSince('websocket', 'default', 'conv-1', 0)).toEqual([a0, a1, b0]);
    expect(await s.deliveries.finalsSince('websocket', 'default', 'conv-1', a0.id)).toEqual([a1, b0]);
    expect(await s.deliveries.finalsSince('websocket', 'default', 'conv-1', b0.id)).toEqual([]);
    expect((await s.deliveries.finalsSince('websocket', 'default', 'conv-2', 0)).map((d) => d.turnId)).toEqual(['tx']);
    expect(await s.deliveries.finalsSince('websocket', 'default', 'nowhere', 0)).toEqual([]);
  });

  it('remove deletes a ledger row', async () => {
    const s = store();
    const draft = (await s.deliveries.record(part('t1', 0, 'draft'))).record;
    const fin = (await s.deliveries.record(part('t1', 0, 'final'))).record;
    await s.deliveries.remove(draft.id);
    expect(await s.deliveries.ofTurn('t1')).toEqual([fin]);
    const redo = await s.deliveries.record(part('t1', 0, 'draft'));
    expect(redo.existed).toBe(false);
    await s.deliveries.remove(123456);
  });
}
