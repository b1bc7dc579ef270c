import type { LedgerWrite, NewDelivery, Storage } from '@switchboard/core';
import { newDeliveryRow } from '../delivery-repo.js';
import { type DeliveryRow, toDelivery } from '../rows.js';
import { lockCursor, type PgDb, type Sql } from './db.js';

/** The ledger's writes, for use inside another repository's transaction (a turn's finish). */
export interface PgDeliveryOps {
  /** Stores one row; idempotent on (turn, part, kind): the first record wins. */
  record(q: Sql, d: NewDelivery): Promise<LedgerWrite>;
}

/** The in-transaction ledger writes. */
export function pgDeliveryOps(): PgDeliveryOps {
  return {
    async record(q, d) {
      // `finalsSince` reads by id: ids must become visible in id order (see lockCursor).
      await lockCursor(q, 'deliveries');
      const r = newDeliveryRow(d);
      const inserted = await q.row<DeliveryRow>(
        `INSERT INTO deliveries (turn_id, part, kind, channel, account, conversation_id, platform_message_id, content, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (turn_id, part, kind) DO NOTHING RETURNING *`,
        [r.turn_id, r.part, r.kind, r.channel, r.account, r.conversation_id, r.platform_message_id, r.content, r.created_at],
      );
      if (inserted) return { record: toDelivery(inserted), existed: false };
      // Only a remove() racing in between could make this read miss.
      const row = await q.row<DeliveryRow>('SELECT * FROM deliveries WHERE turn_id = $1 AND part = $2 AND kind = $3', [d.turnId, d.part, d.kind]);
      if (!row) throw new Error(`delivery ${d.turnId}/${d.part}/${d.kind} conflicted but was not found`);
      return { record: toDelivery(row), existed: true };
    },
  };
}

/** The delivery ledger repository over a PostgreSQL pool. */
export function pgDeliveryRepo(db: PgDb, ops: PgDeliveryOps = pgDeliveryOps()): Storage['deliveries'] {
  return {
    async record(d) {
      return db.tx((q) => ops.record(q, d));
    },
    async ofTurn(turnId) {
      return (await db.rows<DeliveryRow>('SELECT * FROM deliveries WHERE turn_id = $1 ORDER BY id', [turnId])).map(toDelivery);
    },
    async finalsSince(channel, account, conversationId, cursor) {
      const rows = await db.rows<DeliveryRow>(
        `SELECT * FROM deliveries
         WHERE channel = $1 AND account = $2 AND conversation_id = $3 AND id > $4 AND kind = 'final' ORDER BY id`,
        [channel, account, conversationId, cursor],
      );
      return rows.map(toDelivery);
    },
    async remove(id) {
      await db.run('DELETE FROM deliveries WHERE id = $1', [id]);
    },
  };
}
