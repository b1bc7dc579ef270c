import { type Entry, type NewEntry, type SessionKey, type Storage, sessionKeyString } from '@switchboard/core';
import { type EntryRow, type SessionRow, toEntry, toSession } from '../rows.js';
import { boundaryThrough, mergeSettings, newSessionRow } from '../session-repo.js';
import type { PgDb, Sql } from './db.js';
import { fenced } from './leases.js';

/**
 * Session operations that run inside a caller's transaction (`q`, from `db.tx`); none opens one
 * itself. The turns repository composes them into accept/begin/finish.
 */
export interface PgSessionOps {
  /** The live session row for a key, inserted if none. */
  resolve(q: Sql, key: SessionKey): Promise<SessionRow>;
  /** Appends entries after the session's last seq and bumps its updated_at. */
  append(q: Sql, sessionId: string, entries: readonly NewEntry[]): Promise<Entry[]>;
}

const SESSION_COLUMNS = 'id, key, agent_id, channel, account, scope, principal_id, conversation, thread, created_at, updated_at, ended_at, settings';

/** The in-transaction session operations. */
export function pgSessionOps(): PgSessionOps {
  return {
    async resolve(q, key) {
      const k = sessionKeyString(key);
      const existing = await q.row<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE key = $1 AND ended_at IS NULL`, [k]);
      if (existing) return existing;
      const row = newSessionRow(key);
      // Two transactions resolving one new key: the partial unique index makes the later one wait,
      // and its ON CONFLICT on a row its snapshot cannot see is a serialization failure, so `tx` re-runs it.
      const inserted = await q.row<SessionRow>(
        `INSERT INTO sessions (${SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         ON CONFLICT (key) WHERE ended_at IS NULL DO NOTHING RETURNING ${SESSION_COLUMNS}`,
        [
          row.id,
          row.key,
          row.agent_id,
          row.channel,
          row.account,
          row.scope,
          row.principal_id,
          row.conversation,
          row.thread,
          row.created_at,
          row.updated_at,
          row.ended_at,
          row.settings,
        ],
      );
      if (inserted) return inserted;
      const winner = await q.row<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE key = $1 AND ended_at IS NULL`, [k]);
      if (!winner) throw new Error(`session ${k} conflicted but was not found`);
      return winner;
    },
    async append(q, sessionId, entries) {
      if (entries.length === 0) return [];
      const now = Date.now();
      // The session row's lock first: appends to one session queue on it, so the seq read below is
      // the last committed one (a waiter whose snapshot is older fails to serialize and is re-run).
      await q.run('UPDATE sessions SET updated_at = $1 WHERE id = $2', [now, sessionId]);
      let seq = (await q.row<{ n: number }>('SELECT coalesce(max(seq), 0) AS n FROM entries WHERE session_id = $1', [sessionId]))?.n ?? 0;
      const rows: EntryRow[] = entries.map((e) => ({
        session_id: sessionId,
        seq: ++seq,
        turn_id: e.turnId,
        kind: e.kind,
        // JSON has no `undefined`; store it as null so the row stays valid JSON.
        payload: JSON.stringify(e.payload ?? null),
        created_at: now,
      }));
      await q.run(
        `INSERT INTO entries (session_id, seq, turn_id, kind, payload, created_at)
         SELECT $1, s, t, k, p, $2 FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[]) AS u(s, t, k, p)`,
        [sessionId, now, rows.map((r) => r.seq), rows.map((r) => r.turn_id), rows.map((r) => r.kind), rows.map((r) => r.payload)],
      );
      return rows.map(toEntry);
    },
  };
}

/** An inbox payload with its `text` emptied, or null when it is not a JSON object (an array or a scalar holds no text). */
function withoutText(payload: string): string | null {
  let p: unknown;
  try {
    p = JSON.parse(payload);
  } catch {
    return null;
  }
  return p && typeof p === 'object' && !Array.isArray(p) ? JSON.stringify({ ...p, text: '' }) : null;
}

/** The sessions repository over a PostgreSQL pool. */
export function pgSessionRepo(db: PgDb, ops: PgSessionOps): Storage['sessions'] {
  const byId = (q: Sql, id: string) => q.row<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1`, [id]);
  const load = (q: Sql, sessionId: string) => q.rows<EntryRow>('SELECT * FROM entries WHERE session_id = $1 ORDER BY seq', [sessionId]);
  const endById = (q: Sql, id: string) => q.run('UPDATE sessions SET ended_at = $1 WHERE id = $2 AND ended_at IS NULL', [Date.now(), id]);

  return {
    async resolve(key) {
      return toSession(await db.tx((q) => ops.resolve(q, key)));
    },
    async get(id) {
      const row = await byId(db, id);
      return row ? toSession(row) : null;
    },
    async list(filter = {}) {
      const rows = await db.rows<SessionRow>(
        `SELECT ${SESSION_COLUMNS} FROM sessions
         WHERE ($1::text IS NULL OR principal_id = $1) AND ($2::text IS NULL OR channel = $2)
         ORDER BY updated_at DESC, rowid DESC LIMIT $3 OFFSET $4`,
        [filter.principalId ?? null, filter.channel ?? null, filter.limit ?? null, filter.offset ?? 0],
      );
      return rows.map(toSession);
    },
    async append(sessionId, entries, fence) {
      return db.tx(async (q) => {
        if (fence) await fenced(q, fence);
        return ops.append(q, sessionId, entries);
      });
    },
    async load(sessionId) {
      return (await load(db, sessionId)).map(toEntry);
    },
    async loadFromBoundary(sessionId) {
      const rows = await db.tx(async (q) => {
        const boundary = await q.row<EntryRow>("SELECT * FROM entries WHERE session_id = $1 AND kind = 'compact' ORDER BY seq DESC LIMIT 1", [sessionId]);
        if (!boundary) return load(q, sessionId);
        const through = boundaryThrough(boundary.payload);
        if (through === null) return load(q, sessionId);
        return q.rows<EntryRow>(
          `SELECT * FROM entries WHERE session_id = $1 AND seq > $2
           UNION ALL SELECT * FROM entries WHERE session_id = $1 AND seq <= $2 AND turn_id = $3
           ORDER BY seq`,
          [sessionId, through, boundary.turn_id],
        );
      });
      return rows.map(toEntry);
    },
    async loadTurn(turnId) {
      return (await db.rows<EntryRow>('SELECT * FROM entries WHERE turn_id = $1 ORDER BY seq', [turnId])).map(toEntry);
    },
    async reset(key) {
      await db.run('UPDATE sessions SET ended_at = $1 WHERE key = $2 AND ended_at IS NULL', [Date.now(), sessionKeyString(key)]);
    },
    async updateSettings(sessionId, patch) {
      const row = await db.tx(async (q) => {
        const current = await byId(q, sessionId);
        if (!current) throw new Error(`unknown session: ${sessionId}`);
        const updated = await q.row<SessionRow>(`UPDATE sessions SET settings = $1, updated_at = $2 WHERE id = $3 RETURNING ${SESSION_COLUMNS}`, [
          mergeSettings(current.settings, patch),
          Date.now(),
          sessionId,
        ]);
        if (!updated) throw new Error(`unknown session: ${sessionId}`);
        return updated;
      });
      return toSession(row);
    },
    async end(sessionId) {
      return (await endById(db, sessionId)) > 0;
    },
    async purge(sessionId) {
      return db.tx(async (q) => {
        if (!(await byId(q, sessionId))) return null;
        await endById(q, sessionId);
        const entries = await q.run('DELETE FROM entries WHERE session_id = $1', [sessionId]);
        await q.run('DELETE FROM sidechains WHERE session_id = $1', [sessionId]);
        const deliveries = await q.run('DELETE FROM deliveries WHERE turn_id IN (SELECT id FROM turns WHERE session_id = $1)', [sessionId]);
        // The inbox row and its dedupe key stay, so a redelivered platform message is still recognised.
        // Blanked here, not with jsonb_set: jsonb refuses a `\u0000` escape, which a message's text may hold.
        const items = await q.rows<{ id: string; payload: string }>(
          'SELECT id, payload FROM inbox WHERE turn_id IN (SELECT id FROM turns WHERE session_id = $1)',
          [sessionId],
        );
        for (const item of items) {
          const blanked = withoutText(item.payload);
          if (blanked !== null) await q.run('UPDATE inbox SET payload = $1 WHERE id = $2', [blanked, item.id]);
        }
        await q.run("UPDATE approvals SET input = 'null' WHERE session_id = $1 AND status != 'pending'", [sessionId]);
        return { entries, deliveries };
      });
    },
  };
}
