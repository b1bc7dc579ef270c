import { advisoryKey, type PgDb } from './db.js';
import { NOW_MS } from './leases.js';

// Concurrency slots replicas share (table `shared_slots`): at most `limit` rows of a pool are live
// at once. Takes are serialised per pool by a transaction-scoped advisory lock, so two replicas
// never both see the last free slot. Expiry is the server's time, as for leases.

/** A pool of slots shared by replicas. */
export interface SharedSlotPool {
  /** Takes a slot named `id` for `owner` unless `limit` are live; true when taken. */
  tryTake(id: string): Promise<boolean>;
  /** Extends this owner's live slots `ids`; returns how many were still held. */
  renew(ids: readonly string[]): Promise<number>;
  /** Gives a slot back. */
  release(id: string): Promise<void>;
}

/** Options of {@link pgSlotPool}. */
export interface SlotPoolOptions {
  /** The pool's name (e.g. `subagents`). */
  pool: string;
  /** Slots live at once across replicas (an integer ≥ 1). */
  limit: number;
  /** The replica taking slots. */
  owner: string;
  /** A slot lapses this long after its take or last renewal. */
  ttlMs: number;
}

/** The {@link SharedSlotPool} on PostgreSQL. */
export function pgSlotPool(db: PgDb, o: SlotPoolOptions): SharedSlotPool {
  if (!Number.isInteger(o.limit) || o.limit < 1) throw new Error(`slot pool ${o.pool}: limit must be an integer of at least 1, got ${String(o.limit)}`);
  const lock = advisoryKey(`switchboard:slots:${o.pool}`).toString();
  const ttl = Math.max(1, Math.floor(o.ttlMs));
  return {
    tryTake: (id) =>
      db.tx(async (q) => {
        await q.run('SELECT pg_advisory_xact_lock($1)', [lock]);
        await q.run(`DELETE FROM shared_slots WHERE pool = $1 AND expires_at <= ${NOW_MS}`, [o.pool]);
        const live = await q.row<{ n: number }>('SELECT count(*)::int AS n FROM shared_slots WHERE pool = $1', [o.pool]);
        if ((live?.n ?? 0) >= o.limit) return false;
        await q.run(`INSERT INTO shared_slots (pool, id, owner, expires_at) VALUES ($1, $2, $3, ${NOW_MS} + $4)`, [o.pool, id, o.owner, ttl]);
        return true;
      }),
    renew: (ids) =>
      ids.length === 0
        ? Promise.resolve(0)
        : db.run(`UPDATE shared_slots SET expires_at = ${NOW_MS} + $4 WHERE pool = $1 AND owner = $2 AND id = ANY($3::text[]) AND expires_at > ${NOW_MS}`, [
            o.pool,
            o.owner,
            [...ids],
            ttl,
          ]),
    release: async (id) => {
      await db.run('DELETE FROM shared_slots WHERE pool = $1 AND id = $2 AND owner = $3', [o.pool, id, o.owner]);
    },
  };
}
