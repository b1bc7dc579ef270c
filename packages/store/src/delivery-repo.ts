import type { Database } from 'better-sqlite3';
import type { LedgerWrite, NewDelivery, Storage } from '@switchboard/core';
import { type DeliveryRow, toDelivery } from './rows.js';

/** A `deliveries` row before the database gives it an id. */
export type NewDeliveryRow = Omit<DeliveryRow, 'id'>;

/** The row to insert for a delivery (created now, content as JSON). */
export function newDeliveryRow(d: NewDelivery): NewDeliveryRow {
  return {
    turn_id: d.turnId,
    part: d.part,
    kind: d.kind,
    channel: d.channel,
    account: d.account,
    conversation_id: d.conversationId,
    platform_message_id: d.platformMessageId,
    content: JSON.stringify(d.content),
    created_at: Date.now(),
  };
}

/** The ledger's synchronous writes, for use inside another repository's transaction (a turn's finish). */
export interface DeliveryOps {
  /** Stores one row; idempotent on (turn, part, kind): the first record wins. */
  record(delivery: NewDelivery): LedgerWrite;
}

/** The ledger's prepared statements and synchronous operations over one SQLite handle. */
export function deliveryOps(db: Database): DeliveryOps {
  const insert = db.prepare<[NewDeliveryRow], DeliveryRow>(
    `INSERT INTO deliveries (turn_id, part, kind, channel, account, conversation_id, platform_message_id, content,
       created_at)
     VALUES (@turn_id, @part, @kind, @channel, @account, @conversation_id, @platform_message_id, @content, @created_at)
     ON CONFLICT (turn_id, part, kind) DO NOTHING RETURNING *`,
  );
  const existing = db.prepare<[string, number, string], DeliveryRow>('SELECT * FROM deliveries WHERE turn_id = ? AND part = ? AND kind = ?');
  return {
    record(d) {
      const inserted = insert.get(newDeliveryRow(d));
      if (inserted) return { record: toDelivery(inserted), existed: false };
      // Only a remove() racing in between could make this read miss.
      const row = existing.get(d.turnId, d.part, d.kind);
      if (!row) throw new Error(`delivery ${d.turnId}/${d.part}/${d.kind} conflicted but was not found`);
      return { record: toDelivery(row), existed: true };
    },
  };
}

/** The delivery ledger repository over one SQLite handle. */
export function deliveryRepo(db: Database, ops: DeliveryOps = deliveryOps(db)): Storage['deliveries'] {
  const ofTurn = db.prepare<[string], DeliveryRow>('SELECT * FROM deliveries WHERE turn_id = ? ORDER BY id');
  const finalsSince = db.prepare<[string, string, string, number], DeliveryRow>(
    `SELECT * FROM deliveries
     WHERE channel = ? AND account = ? AND conversation_id = ? AND id > ? AND kind = 'final' ORDER BY id`,
  );
  const remove = db.prepare<[number]>('DELETE FROM deliveries WHERE id = ?');

  return {
    async record(d) {
      return ops.record(d);
    },
    async ofTurn(turnId) {
      return ofTurn.all(turnId).map(toDelivery);
    },
    async finalsSince(channel, account, conversationId, cursor) {
      return finalsSince.all(channel, account, conversationId, cursor).map(toDelivery);
    },
    async remove(id) {
      remove.run(id);
    },
  };
}
