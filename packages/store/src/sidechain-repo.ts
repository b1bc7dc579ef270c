import type { Database } from 'better-sqlite3';
import type { Sidechain, SidechainState, Storage } from '@switchboard/core';

/** A `sidechains` row. */
export interface SidechainRow {
  session_id: string;
  tool_use_id: string;
  turn_id: string;
  type: string;
  description: string;
  state: string;
  messages: string;
  created_at: number;
  updated_at: number;
}

const STATES: readonly SidechainState[] = ['running', 'completed', 'failed', 'aborted', 'interrupted'];

/** A stored row as a {@link Sidechain}; an unparseable message list reads as empty, an unknown state as `failed`. */
export function sidechainOf(row: SidechainRow): Sidechain {
  let messages: unknown = [];
  try {
    messages = JSON.parse(row.messages);
  } catch {
    messages = [];
  }
  return {
    sessionId: row.session_id,
    toolUseId: row.tool_use_id,
    turnId: row.turn_id,
    type: row.type,
    description: row.description,
    state: (STATES as readonly string[]).includes(row.state) ? (row.state as SidechainState) : 'failed',
    messages: Array.isArray(messages) ? messages : [],
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** Subagent transcripts over one SQLite handle: one row per parent `task` tool_use, deleted with the session. */
export function sidechainRepo(db: Database): Storage['sidechains'] {
  const insert = db.prepare<[string, string, string, string, string, string, number, number]>(
    `INSERT INTO sidechains (session_id, tool_use_id, turn_id, type, description, state, messages, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)
     ON CONFLICT (session_id, tool_use_id) DO NOTHING`,
  );
  const update = db.prepare<[string, string, number, string, string]>(
    'UPDATE sidechains SET messages = ?, state = ?, updated_at = ? WHERE session_id = ? AND tool_use_id = ?',
  );
  const get = db.prepare<[string, string], SidechainRow>('SELECT * FROM sidechains WHERE session_id = ? AND tool_use_id = ?');
  const list = db.prepare<[string], SidechainRow>('SELECT * FROM sidechains WHERE session_id = ? ORDER BY created_at, rowid');
  const interrupt = db.prepare<[number]>("UPDATE sidechains SET state = 'interrupted', updated_at = ? WHERE state = 'running'");
  const interruptOf = db.prepare<[number, string]>(
    "UPDATE sidechains SET state = 'interrupted', updated_at = ? WHERE state = 'running' AND turn_id IN (SELECT value FROM json_each(?))",
  );
  return {
    async start(s) {
      const now = Date.now();
      return insert.run(s.sessionId, s.toolUseId, s.turnId, s.type, s.description, JSON.stringify(s.messages), now, now).changes === 1;
    },
    async save(sessionId, toolUseId, messages, state) {
      update.run(JSON.stringify(messages), state, Date.now(), sessionId, toolUseId);
    },
    async get(sessionId, toolUseId) {
      const row = get.get(sessionId, toolUseId);
      return row ? sidechainOf(row) : null;
    },
    async list(sessionId) {
      return list.all(sessionId).map(sidechainOf);
    },
    async interruptRunning(turnIds) {
      return turnIds ? interruptOf.run(Date.now(), JSON.stringify(turnIds)).changes : interrupt.run(Date.now()).changes;
    },
  };
}
