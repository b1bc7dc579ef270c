import type { Storage } from '@switchboard/core';
import type { PgDb } from './db.js';

/** Channel cursors (the Telegram update offset) over a PostgreSQL pool: one row per key, shared by every replica. */
export function pgCursorRepo(db: PgDb): Storage['cursors'] {
  return {
    async get(key) {
      return (await db.row<{ value: string }>('SELECT value FROM cursors WHERE key = $1', [key]))?.value ?? null;
    },
    async set(key, value) {
      await db.run(
        `INSERT INTO cursors (key, value, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
        [key, value, Date.now()],
      );
    },
  };
}
