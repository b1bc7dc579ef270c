import type { Storage } from '@switchboard/core';
import { type SidechainRow, sidechainOf } from '../sidechain-repo.js';
import type { PgDb } from './db.js';

/** Subagent transcripts over a PostgreSQL pool: one row per parent `task` tool_use, deleted with the session. */
export function pgSidechainRepo(db: PgDb): Storage['sidechains'] {
  return {
    async start(s) {
      const now = Date.now();
      const n = await db.run(
        `INSERT INTO sidechains (session_id, tool_use_id, turn_id, type, description, state, messages, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $7)
         ON CONFLICT (session_id, tool_use_id) DO NOTHING`,
        [s.sessionId, s.toolUseId, s.turnId, s.type, s.description, JSON.stringify(s.messages), now],
      );
      return n === 1;
    },
    async save(sessionId, toolUseId, messages, state) {
      await db.run('UPDATE sidechains SET messages = $1, state = $2, updated_at = $3 WHERE session_id = $4 AND tool_use_id = $5', [
        JSON.stringify(messages),
        state,
        Date.now(),
        sessionId,
        toolUseId,
      ]);
    },
    async get(sessionId, toolUseId) {
      const row = await db.row<SidechainRow>('SELECT * FROM sidechains WHERE session_id = $1 AND tool_use_id = $2', [sessionId, toolUseId]);
      return row ? sidechainOf(row) : null;
    },
    async list(sessionId) {
      return (await db.rows<SidechainRow>('SELECT * FROM sidechains WHERE session_id = $1 ORDER BY created_at, rowid', [sessionId])).map(sidechainOf);
    },
    async interruptRunning(turnIds) {
      if (turnIds) {
        return db.run("UPDATE sidechains SET state = 'interrupted', updated_at = $1 WHERE state = 'running' AND turn_id = ANY($2::text[])", [
          Date.now(),
          [...turnIds],
        ]);
      }
      return db.run("UPDATE sidechains SET state = 'interrupted', updated_at = $1 WHERE state = 'running'", [Date.now()]);
    },
  };
}
