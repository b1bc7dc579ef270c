import { randomUUID } from 'node:crypto';
import type { Storage } from '@switchboard/core';
import { type DeadRow, deadPayload, toDeadLetter } from '../dead-letter-repo.js';
import type { PgDb } from './db.js';

/** Dead letters over a PostgreSQL pool: failed inbox rows (`failed_at` set). */
export function pgDeadLetterRepo(db: PgDb): Storage['deadLetters'] {
  return {
    async record(d) {
      return db.tx(async (q) => {
        const id = randomUUID();
        const now = Date.now();
        const error = d.error.slice(0, 2000);
        const inserted = await q.run(
          `INSERT INTO inbox (id, channel, account, dedupe_key, payload, received_at, failed_at, error, attempts) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (channel, account, dedupe_key) DO NOTHING`,
          [id, d.channel, d.account, d.dedupeKey, deadPayload(d), d.receivedAt.getTime(), now, error, d.attempts],
        );
        if (inserted === 1) return { id, existed: false };
        // An item that already has a turn is never marked failed.
        const marked = await q.row<{ id: string }>(
          'UPDATE inbox SET failed_at = $1, error = $2, attempts = $3 WHERE channel = $4 AND account = $5 AND dedupe_key = $6 AND turn_id IS NULL RETURNING id',
          [now, error, d.attempts, d.channel, d.account, d.dedupeKey],
        );
        const existing =
          marked ??
          (await q.row<{ id: string }>('SELECT id FROM inbox WHERE channel = $1 AND account = $2 AND dedupe_key = $3', [d.channel, d.account, d.dedupeKey]));
        return { id: existing?.id ?? id, existed: true };
      });
    },
    async list(opts = {}) {
      const rows = await db.rows<DeadRow>(
        `SELECT id, channel, account, dedupe_key, payload, received_at, failed_at, error, attempts FROM inbox
         WHERE failed_at IS NOT NULL AND ($1::text IS NULL OR channel || ':' || account = $1) ORDER BY failed_at DESC, rowid DESC LIMIT $2`,
        [opts.channel ?? null, Math.min(Math.max(opts.limit ?? 100, 1), 1000)],
      );
      return rows.map(toDeadLetter);
    },
    async count() {
      return (await db.row<{ n: number }>('SELECT count(*) AS n FROM inbox WHERE failed_at IS NOT NULL'))?.n ?? 0;
    },
  };
}
