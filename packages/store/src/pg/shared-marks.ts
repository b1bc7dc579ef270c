import type { MarkPut, SharedMarks } from '@switchboard/core';
import type { Sql } from './db.js';

// Marks replicas share (table `shared_marks`). Expiry is compared with the caller's epoch ms, the
// same clock the caller used to compute it (the webhook's signed timestamp, the OpenAI window).

/** Dead marks deleted per put, at most (they are also never read: expiry is checked on every read). */
const SWEEP_BATCH = 100;

/** The {@link SharedMarks} on PostgreSQL. */
export function pgSharedMarks(db: Sql, now: () => number = Date.now): SharedMarks {
  return {
    async put(key: string, value: string, expiresAt: number): Promise<MarkPut> {
      const t = now();
      // One statement: insert, or take over a dead mark; a live one is left alone and read back.
      const won = await db.row<{ key: string }>(
        `INSERT INTO shared_marks (key, value, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
         WHERE shared_marks.expires_at < $4
         RETURNING key`,
        [key, value, Math.floor(expiresAt), t],
      );
      if (won) {
        await db.run('DELETE FROM shared_marks WHERE key IN (SELECT key FROM shared_marks WHERE expires_at < $1 ORDER BY expires_at LIMIT $2)', [
          t,
          SWEEP_BATCH,
        ]);
        return { created: true };
      }
      const live = await db.row<{ value: string }>('SELECT value FROM shared_marks WHERE key = $1 AND expires_at >= $2', [key, t]);
      // Expired between the two statements: the caller may act (nobody else holds it now).
      return live ? { created: false, value: live.value } : this.put(key, value, expiresAt);
    },
    async update(key: string, value: string): Promise<void> {
      await db.run('UPDATE shared_marks SET value = $2 WHERE key = $1 AND expires_at >= $3', [key, value, now()]);
    },
    async forget(key: string, value: string): Promise<void> {
      await db.run('DELETE FROM shared_marks WHERE key = $1 AND value = $2', [key, value]);
    },
  };
}
