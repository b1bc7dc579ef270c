import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { type Entry, type NewEntry, type SessionKey, type Storage, sessionKeyString } from '@switchboard/core';
import { type EntryRow, type SessionRow, toEntry, toSession } from './rows.js';

/**
 * Session operations that run inside a caller's transaction (the turns repository composes them
 * into accept/begin). None of these opens a transaction itself.
 */
export interface SessionOps {
  /** The live session row for a key, inserted if none. */
  resolve(key: SessionKey): SessionRow;
  /** Appends entries after the session's last seq and bumps its updated_at. */
  append(sessionId: string, entries: readonly NewEntry[]): Entry[];
}

/** A new live session row for a key (a new id, created now, empty settings). */
export function newSessionRow(key: SessionKey): SessionRow {
  const now = Date.now();
  return {
    id: randomUUID(),
    key: sessionKeyString(key),
    agent_id: key.agent,
    channel: key.channel,
    account: key.account,
    scope: key.scope,
    principal_id: key.scope === 'dm' ? key.principalId : null,
    conversation: key.scope === 'room' ? key.conversation : null,
    thread: key.scope === 'room' ? (key.thread ?? null) : (key.label ?? null),
    created_at: now,
    updated_at: now,
    ended_at: null,
    settings: '{}',
  };
}

/** A compaction boundary's `throughSeq` (the last seq it summarises), or null when the payload has none. */
export function boundaryThrough(payload: string): number | null {
  const through = (JSON.parse(payload) as { throughSeq?: unknown } | null)?.throughSeq;
  return typeof through === 'number' && Number.isFinite(through) ? through : null;
}

/** The settings JSON after a patch: `null` deletes a key, `undefined` leaves it. */
export function mergeSettings(settings: string, patch: Record<string, unknown>): string {
  const next: Record<string, unknown> = { ...(JSON.parse(settings) as Record<string, unknown>) };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k];
    else if (v !== undefined) next[k] = v;
  }
  return JSON.stringify(next);
}

/** Builds the in-transaction session operations over one SQLite handle. */
export function sessionOps(db: Database): SessionOps {
  const live = db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE key = ? AND ended_at IS NULL');
  const insert = db.prepare<[SessionRow]>(
    `INSERT INTO sessions (id, key, agent_id, channel, account, scope, principal_id, conversation, thread,
       created_at, updated_at, ended_at, settings)
     VALUES (@id, @key, @agent_id, @channel, @account, @scope, @principal_id, @conversation, @thread,
       @created_at, @updated_at, @ended_at, @settings)`,
  );
  const lastSeq = db.prepare<[string], { n: number }>('SELECT coalesce(max(seq), 0) AS n FROM entries WHERE session_id = ?');
  const insertEntry = db.prepare<[string, number, string | null, string, string, number]>(
    'INSERT INTO entries (session_id, seq, turn_id, kind, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const touch = db.prepare<[number, string]>('UPDATE sessions SET updated_at = ? WHERE id = ?');

  return {
    resolve(key) {
      const k = sessionKeyString(key);
      const existing = live.get(k);
      if (existing) return existing;
      const row = newSessionRow(key);
      insert.run(row);
      return row;
    },
    append(sessionId, entries) {
      if (entries.length === 0) return [];
      const now = Date.now();
      let seq = lastSeq.get(sessionId)?.n ?? 0;
      const out: Entry[] = [];
      for (const e of entries) {
        seq += 1;
        // JSON has no `undefined`; store it as null so the row stays valid JSON.
        const payload = JSON.stringify(e.payload ?? null);
        insertEntry.run(sessionId, seq, e.turnId, e.kind, payload, now);
        out.push(toEntry({ session_id: sessionId, seq, turn_id: e.turnId, kind: e.kind, payload, created_at: now }));
      }
      touch.run(now, sessionId);
      return out;
    },
  };
}

/** The sessions repository over one SQLite handle. */
export function sessionRepo(db: Database, ops: SessionOps): Storage['sessions'] {
  const byId = db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?');
  const list = db.prepare<{ principalId: string | null; channel: string | null; limit: number; offset: number }, SessionRow>(
    `SELECT * FROM sessions
     WHERE (@principalId IS NULL OR principal_id = @principalId) AND (@channel IS NULL OR channel = @channel)
     ORDER BY updated_at DESC, rowid DESC LIMIT @limit OFFSET @offset`,
  );
  const load = db.prepare<[string], EntryRow>('SELECT * FROM entries WHERE session_id = ? ORDER BY seq');
  const loadTurn = db.prepare<[string], EntryRow>('SELECT * FROM entries WHERE turn_id = ? ORDER BY seq');
  const lastBoundary = db.prepare<[string], EntryRow>("SELECT * FROM entries WHERE session_id = ? AND kind = 'compact' ORDER BY seq DESC LIMIT 1");
  const fromBoundary = db.prepare<{ sessionId: string; through: number; turnId: string | null }, EntryRow>(
    `SELECT * FROM entries WHERE session_id = @sessionId AND seq > @through
     UNION ALL SELECT * FROM entries WHERE session_id = @sessionId AND seq <= @through AND turn_id = @turnId
     ORDER BY seq`,
  );
  const loadView = db.transaction((sessionId: string) => {
    const boundary = lastBoundary.get(sessionId);
    if (!boundary) return load.all(sessionId);
    const through = boundaryThrough(boundary.payload);
    if (through === null) return load.all(sessionId);
    return fromBoundary.all({ sessionId, through, turnId: boundary.turn_id });
  });
  const end = db.prepare<[number, string]>('UPDATE sessions SET ended_at = ? WHERE key = ? AND ended_at IS NULL');
  const setSettings = db.prepare<[string, number, string], SessionRow>('UPDATE sessions SET settings = ?, updated_at = ? WHERE id = ? RETURNING *');
  const updateSettings = db.transaction((sessionId: string, patch: Record<string, unknown>) => {
    const row = byId.get(sessionId);
    if (!row) throw new Error(`unknown session: ${sessionId}`);
    return setSettings.get(mergeSettings(row.settings, patch), Date.now(), sessionId)!;
  });

  const endById = db.prepare<[number, string]>('UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL');
  const deleteEntries = db.prepare<[string]>('DELETE FROM entries WHERE session_id = ?');
  const deleteSidechains = db.prepare<[string]>('DELETE FROM sidechains WHERE session_id = ?');
  const deleteDeliveries = db.prepare<[string]>('DELETE FROM deliveries WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?)');
  // The inbox row and its dedupe key stay, so a redelivered platform message is still recognised.
  const blankInbox = db.prepare<[string]>(
    `UPDATE inbox SET payload = json_set(payload, '$.text', '') WHERE turn_id IN (SELECT id FROM turns WHERE session_id = ?)`,
  );
  const blankApprovals = db.prepare<[string]>("UPDATE approvals SET input = 'null' WHERE session_id = ? AND status != 'pending'");
  const purge = db.transaction((sessionId: string) => {
    if (!byId.get(sessionId)) return null;
    endById.run(Date.now(), sessionId);
    const entries = deleteEntries.run(sessionId).changes;
    deleteSidechains.run(sessionId);
    const deliveries = deleteDeliveries.run(sessionId).changes;
    blankInbox.run(sessionId);
    blankApprovals.run(sessionId);
    return { entries, deliveries };
  });

  const resolve = db.transaction((key: SessionKey) => ops.resolve(key));
  const append = db.transaction((sessionId: string, entries: readonly NewEntry[]) => ops.append(sessionId, entries));

  return {
    async resolve(key) {
      return toSession(resolve.immediate(key));
    },
    async get(id) {
      const row = byId.get(id);
      return row ? toSession(row) : null;
    },
    async list(filter = {}) {
      const rows = list.all({
        principalId: filter.principalId ?? null,
        channel: filter.channel ?? null,
        // SQLite reads a negative LIMIT as "no limit".
        limit: filter.limit ?? -1,
        offset: filter.offset ?? 0,
      });
      return rows.map(toSession);
    },
    async append(sessionId, entries) {
      return append.immediate(sessionId, entries);
    },
    async load(sessionId) {
      return load.all(sessionId).map(toEntry);
    },
    async loadFromBoundary(sessionId) {
      return loadView(sessionId).map(toEntry);
    },
    async loadTurn(turnId) {
      return loadTurn.all(turnId).map(toEntry);
    },
    async reset(key) {
      end.run(Date.now(), sessionKeyString(key));
    },
    async updateSettings(sessionId, patch) {
      return toSession(updateSettings.immediate(sessionId, patch));
    },
    async end(sessionId) {
      return endById.run(Date.now(), sessionId).changes > 0;
    },
    async purge(sessionId) {
      return purge.immediate(sessionId);
    },
  };
}
