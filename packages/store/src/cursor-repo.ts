import type { Database } from 'better-sqlite3';
import type { Storage } from '@switchboard/core';

/** Channel cursors (the Telegram update offset) over one SQLite handle: one row per key. */
export function cursorRepo(db: Database): Storage['cursors'] {
  const get = db.prepare<[string], { value: string }>('SELECT value FROM cursors WHERE key = ?');
  const upsert = db.prepare<[string, string, number]>(
    `INSERT INTO cursors (key, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  );
  return {
    async get(key) {
      return get.get(key)?.value ?? null;
    },
    async set(key, value) {
      upsert.run(key, value, Date.now());
    },
  };
}
