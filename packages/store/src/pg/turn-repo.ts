import { randomUUID } from 'node:crypto';
import type { AcceptResult, NewUsageRecord, Storage, TurnState } from '@switchboard/core';
import { type InboxRow, type TurnRow, toInboxItem, toTurn } from '../rows.js';
import { duplicateOf, turnSummary, UNFINISHED } from '../turn-repo.js';
import type { PgDb, Sql } from './db.js';
import { fenced } from './leases.js';
import type { PgDeliveryOps } from './delivery-repo.js';
import type { PgSessionOps } from './session-repo.js';
import type { PgUsageOps } from './usage-repo.js';

type DupRow = { id: string; turn_id: string | null; session_id: string | null; payload: string };

// The text is read here, not with `payload::jsonb`: jsonb refuses a `\u0000` escape, which a message's text may hold.
const EXISTING_INBOX = `SELECT i.id, i.turn_id, t.session_id, i.payload
  FROM inbox i LEFT JOIN turns t ON t.id = i.turn_id WHERE i.channel = $1 AND i.account = $2 AND i.dedupe_key = $3`;

/** The stored item's `text` (undefined when the payload is not an object with one), as SQLite's `json_extract` reads it. */
function textOf(payload: string): unknown {
  try {
    const p = JSON.parse(payload) as unknown;
    return p && typeof p === 'object' && !Array.isArray(p) ? (p as { text?: unknown }).text : undefined;
  } catch {
    return undefined;
  }
}

const duplicate = (dup: DupRow, text: string | undefined): AcceptResult => duplicateOf({ ...dup, text: textOf(dup.payload) }, text);

/** The turns repository (inbox, turn state machine) over a PostgreSQL pool; every write is one `db.tx`. */
export function pgTurnRepo(db: PgDb, sessions: PgSessionOps, deliveries: PgDeliveryOps, usage: PgUsageOps): Storage['turns'] {
  // reason/error describe the latest transition, so a state change without them clears them.
  const update = async (q: Sql, turnId: string, state: TurnState, reason: string | null, error: string | null): Promise<TurnRow> => {
    const row = await q.row<TurnRow>('UPDATE turns SET state = $1, updated_at = $2, reason = $3, error = $4 WHERE id = $5 RETURNING *', [
      state,
      Date.now(),
      reason,
      error,
      turnId,
    ]);
    if (!row) throw new Error(`unknown turn: ${turnId}`);
    return row;
  };
  const setUsage = (q: Sql, usageJson: string, turnId: string) => q.run('UPDATE turns SET usage = $1 WHERE id = $2', [usageJson, turnId]);
  const recordCalls = async (q: Sql, calls: readonly NewUsageRecord[]) => {
    for (const call of calls) await usage.record(q, call);
  };

  return {
    async absorb(sessionId, turnIds, entries, fence) {
      return db.tx(async (q) => {
        if (fence) await fenced(q, fence);
        const now = Date.now();
        for (const id of turnIds) {
          const n = await q.run(
            `UPDATE turns SET state = 'completed', reason = 'steered', error = NULL, updated_at = $1 WHERE id = $2 AND session_id = $3 AND state = 'queued'`,
            [now, id, sessionId],
          );
          if (n !== 1) throw new Error(`turn ${id} is not a queued turn of session ${sessionId}`);
        }
        return sessions.append(q, sessionId, entries);
      });
    },
    async accept(message, route) {
      return db.tx(async (q): Promise<AcceptResult> => {
        const inboxId = randomUUID();
        const { channel, account, dedupeKey } = message;
        // A concurrent accept of the same key makes this wait; its row is invisible to this
        // snapshot, so DO NOTHING fails to serialize and `tx` re-runs this, which then sees the duplicate.
        const inserted = await q.run(
          `INSERT INTO inbox (id, channel, account, dedupe_key, payload, received_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (channel, account, dedupe_key) DO NOTHING`,
          [inboxId, channel, account, dedupeKey, JSON.stringify(message), message.receivedAt.getTime()],
        );
        if (inserted === 0) {
          const dup = await q.row<DupRow>(EXISTING_INBOX, [channel, account, dedupeKey]);
          if (!dup) throw new Error('inbox conflict without an existing row');
          return duplicate(dup, message.text);
        }
        const session = await sessions.resolve(q, route.key);
        const now = Date.now();
        const turnId = randomUUID();
        await q.run(
          `INSERT INTO turns (id, session_id, inbox_id, state, client_id, created_at, updated_at, reason, error, usage)
           VALUES ($1, $2, $3, 'queued', $4, $5, $5, NULL, NULL, NULL)`,
          [turnId, session.id, inboxId, route.clientId, now],
        );
        await q.run('UPDATE inbox SET turn_id = $1 WHERE id = $2', [turnId, inboxId]);
        return { duplicate: false, inboxId, turnId, sessionId: session.id };
      });
    },
    async get(id) {
      const row = await db.row<TurnRow>('SELECT * FROM turns WHERE id = $1', [id]);
      return row ? toTurn(row) : null;
    },
    async unfinished() {
      return (await db.rows<TurnRow>(`SELECT * FROM turns WHERE state IN ${UNFINISHED} ORDER BY created_at, rowid`)).map(toTurn);
    },
    async nextQueued(sessionId) {
      const row = await db.row<TurnRow>(`SELECT * FROM turns WHERE session_id = $1 AND state = 'queued' ORDER BY created_at, rowid LIMIT 1`, [sessionId]);
      return row ? toTurn(row) : null;
    },
    async begin(turnId, entries, calls = [], fence) {
      return db.tx(async (q) => {
        if (fence) await fenced(q, fence);
        const row = await update(q, turnId, 'running', null, null);
        const stored = await sessions.append(q, row.session_id, entries);
        await recordCalls(q, calls);
        return { turn: toTurn(row), entries: stored };
      });
    },
    async append(turnId, entries, calls = [], fence) {
      return db.tx(async (q) => {
        if (fence) await fenced(q, fence);
        const row = await q.row<{ session_id: string }>('SELECT session_id FROM turns WHERE id = $1', [turnId]);
        if (!row) throw new Error(`unknown turn ${turnId}`);
        const stored = await sessions.append(q, row.session_id, entries);
        await recordCalls(q, calls);
        return stored;
      });
    },
    async finish(turnId, end) {
      return db.tx(async (q) => {
        if (end.fence) await fenced(q, end.fence);
        let row = await update(q, turnId, end.state, end.reason ?? null, end.error ?? null);
        const stored = await sessions.append(q, row.session_id, end.entries ?? []);
        await recordCalls(q, end.calls ?? []);
        if (end.usage) {
          const usageJson = JSON.stringify(end.usage);
          await setUsage(q, usageJson, turnId);
          row = { ...row, usage: usageJson };
        }
        const delivery = end.delivery ? await deliveries.record(q, end.delivery) : undefined;
        return { turn: toTurn(row), entries: stored, ...(delivery ? { delivery } : {}) };
      });
    },
    async setState(turnId, state, info) {
      await db.tx(async (q) => {
        await update(q, turnId, state, info?.reason ?? null, info?.error ?? null);
        if (info?.usage) await setUsage(q, JSON.stringify(info.usage), turnId);
      });
    },
    async suspendActive() {
      return db.run(`UPDATE turns SET state = 'suspended', updated_at = $1 WHERE state IN ('running', 'awaiting_approval')`, [Date.now()]);
    },
    async seen(channel, account, dedupeKey, text) {
      const dup = await db.row<DupRow>(EXISTING_INBOX, [channel, account, dedupeKey]);
      return dup ? duplicate(dup, text) : null;
    },
    async inbox(inboxId) {
      const row = await db.row<InboxRow>('SELECT * FROM inbox WHERE id = $1', [inboxId]);
      return row ? toInboxItem(row) : null;
    },
    async summary(since) {
      const t = since.getTime();
      const [states, usages] = await Promise.all([
        db.rows<{ state: string; n: number }>('SELECT state, count(*) AS n FROM turns WHERE created_at >= $1 GROUP BY state', [t]),
        db.rows<{ usage: string }>('SELECT usage FROM turns WHERE created_at >= $1 AND usage IS NOT NULL', [t]),
      ]);
      return turnSummary(states, usages);
    },
  };
}
