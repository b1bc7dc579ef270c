import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { AcceptResult, Entry, InboundMessage, LedgerWrite, NewEntry, NewUsageRecord, SessionKey, Storage, TurnFinish, TurnState } from '@switchboard/core';
import type { DeliveryOps } from './delivery-repo.js';
import type { UsageOps } from './usage-repo.js';
import { type InboxRow, type TurnRow, toInboxItem, toTurn } from './rows.js';
import type { SessionOps } from './session-repo.js';

/** The states of a turn that has not ended (SQL list). */
export const UNFINISHED = `('queued', 'running', 'awaiting_approval', 'suspended')`;

/**
 * A duplicate's answer. `sameText` compares the stored text with `text` (when given); a purged
 * item's text is empty and unknown, so it is not compared.
 */
export function duplicateOf(dup: { id: string; turn_id: string | null; session_id: string | null; text: unknown }, text: string | undefined): AcceptResult {
  const stored = typeof dup.text === 'string' && dup.text !== '' ? dup.text : null;
  return {
    duplicate: true,
    inboxId: dup.id,
    turnId: dup.turn_id,
    sessionId: dup.session_id,
    ...(text !== undefined && stored !== null ? { sameText: stored === text } : {}),
  };
}

/** The turns summary from per-state counts and the finished turns' usage cells (both engines fold the same rows). */
export function turnSummary(
  states: readonly { state: string; n: number }[],
  usages: readonly { usage: string }[],
): Awaited<ReturnType<Storage['turns']['summary']>> {
  const byState: Record<string, number> = {};
  for (const r of states) byState[r.state] = r.n;
  const usage = { turns: 0, inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
  for (const r of usages) {
    let u: Partial<Record<keyof typeof usage, unknown>>;
    try {
      u = JSON.parse(r.usage) as typeof u;
    } catch {
      continue; // a damaged usage cell does not hide the others
    }
    usage.turns++;
    for (const k of ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens'] as const) {
      if (typeof u[k] === 'number') usage[k] += u[k];
    }
  }
  return { byState, usage };
}

/** The turns repository (inbox, turn state machine) over one SQLite handle. */
export function turnRepo(db: Database, sessions: SessionOps, deliveries: DeliveryOps, usage: UsageOps): Storage['turns'] {
  const insertInbox = db.prepare<[string, string, string, string, string, number]>(
    `INSERT INTO inbox (id, channel, account, dedupe_key, payload, received_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (channel, account, dedupe_key) DO NOTHING`,
  );
  const existingInbox = db.prepare<[string, string, string], { id: string; turn_id: string | null; session_id: string | null; text: unknown }>(
    `SELECT i.id, i.turn_id, t.session_id, json_extract(i.payload, '$.text') AS text FROM inbox i LEFT JOIN turns t ON t.id = i.turn_id
     WHERE i.channel = ? AND i.account = ? AND i.dedupe_key = ?`,
  );
  const insertTurn = db.prepare<[TurnRow]>(
    `INSERT INTO turns (id, session_id, inbox_id, state, client_id, created_at, updated_at, reason, error, usage)
     VALUES (@id, @session_id, @inbox_id, @state, @client_id, @created_at, @updated_at, @reason, @error, @usage)`,
  );
  const linkInbox = db.prepare<[string, string]>('UPDATE inbox SET turn_id = ? WHERE id = ?');
  const byId = db.prepare<[string], TurnRow>('SELECT * FROM turns WHERE id = ?');
  const unfinished = db.prepare<[], TurnRow>(`SELECT * FROM turns WHERE state IN ${UNFINISHED} ORDER BY created_at, rowid`);
  const nextQueued = db.prepare<[string], TurnRow>(`SELECT * FROM turns WHERE session_id = ? AND state = 'queued' ORDER BY created_at, rowid LIMIT 1`);
  // reason/error describe the latest transition, so a state change without them clears them.
  const setState = db.prepare<[string, number, string | null, string | null, string], TurnRow>(
    'UPDATE turns SET state = ?, updated_at = ?, reason = ?, error = ? WHERE id = ? RETURNING *',
  );
  const setUsage = db.prepare<[string, string]>('UPDATE turns SET usage = ? WHERE id = ?');
  const absorbTurn = db.prepare<[number, string, string]>(
    `UPDATE turns SET state = 'completed', reason = 'steered', error = NULL, updated_at = ? WHERE id = ? AND session_id = ? AND state = 'queued'`,
  );
  const suspend = db.prepare<[number]>(`UPDATE turns SET state = 'suspended', updated_at = ? WHERE state IN ('running', 'awaiting_approval')`);
  const inboxById = db.prepare<[string], InboxRow>('SELECT * FROM inbox WHERE id = ?');
  const statesSince = db.prepare<[number], { state: string; n: number }>('SELECT state, count(*) AS n FROM turns WHERE created_at >= ? GROUP BY state');
  const usageSince = db.prepare<[number], { usage: string }>('SELECT usage FROM turns WHERE created_at >= ? AND usage IS NOT NULL');

  const accept = db.transaction((message: InboundMessage, key: SessionKey, clientId: string | null): AcceptResult => {
    const inboxId = randomUUID();
    const payload = JSON.stringify(message);
    const { channel, account, dedupeKey } = message;
    if (insertInbox.run(inboxId, channel, account, dedupeKey, payload, message.receivedAt.getTime()).changes === 0) {
      const dup = existingInbox.get(channel, account, dedupeKey);
      if (!dup) throw new Error('inbox conflict without an existing row');
      return duplicateOf(dup, message.text);
    }
    const session = sessions.resolve(key);
    const now = Date.now();
    const turnId = randomUUID();
    insertTurn.run({
      id: turnId,
      session_id: session.id,
      inbox_id: inboxId,
      state: 'queued',
      client_id: clientId,
      created_at: now,
      updated_at: now,
      reason: null,
      error: null,
      usage: null,
    });
    linkInbox.run(turnId, inboxId);
    return { duplicate: false, inboxId, turnId, sessionId: session.id };
  });

  const update = (turnId: string, state: TurnState, reason: string | null, error: string | null): TurnRow => {
    const row = setState.get(state, Date.now(), reason, error, turnId);
    if (!row) throw new Error(`unknown turn: ${turnId}`);
    return row;
  };

  const begin = db.transaction((turnId: string, entries: readonly NewEntry[], calls: readonly NewUsageRecord[]): { row: TurnRow; stored: Entry[] } => {
    const row = update(turnId, 'running', null, null);
    const stored = sessions.append(row.session_id, entries);
    for (const call of calls) usage.record(call);
    return { row, stored };
  });

  const appendTx = db.transaction((turnId: string, entries: readonly NewEntry[], calls: readonly NewUsageRecord[]): Entry[] => {
    const row = byId.get(turnId);
    if (!row) throw new Error(`unknown turn ${turnId}`);
    const stored = sessions.append(row.session_id, entries);
    for (const call of calls) usage.record(call);
    return stored;
  });

  const setStateTx = db.transaction((turnId: string, state: TurnState, reason: string | null, error: string | null, usage: string | null) => {
    update(turnId, state, reason, error);
    if (usage !== null) setUsage.run(usage, turnId);
  });

  const finish = db.transaction((turnId: string, end: TurnFinish): { row: TurnRow; stored: Entry[]; delivery?: LedgerWrite } => {
    let row = update(turnId, end.state, end.reason ?? null, end.error ?? null);
    const stored = sessions.append(row.session_id, end.entries ?? []);
    for (const call of end.calls ?? []) usage.record(call);
    if (end.usage) {
      const usage = JSON.stringify(end.usage);
      setUsage.run(usage, turnId);
      row = { ...row, usage };
    }
    return end.delivery ? { row, stored, delivery: deliveries.record(end.delivery) } : { row, stored };
  });

  const absorb = db.transaction((sessionId: string, turnIds: string[], entries: NewEntry[]) => {
    const now = Date.now();
    for (const id of turnIds) {
      if (absorbTurn.run(now, id, sessionId).changes !== 1) throw new Error(`turn ${id} is not a queued turn of session ${sessionId}`);
    }
    return sessions.append(sessionId, entries);
  });

  return {
    async absorb(sessionId, turnIds, entries) {
      return absorb.immediate(sessionId, turnIds, entries);
    },
    async accept(message, route) {
      return accept.immediate(message, route.key, route.clientId);
    },
    async get(id) {
      const row = byId.get(id);
      return row ? toTurn(row) : null;
    },
    async unfinished() {
      return unfinished.all().map(toTurn);
    },
    async nextQueued(sessionId) {
      const row = nextQueued.get(sessionId);
      return row ? toTurn(row) : null;
    },
    async begin(turnId, entries, calls = []) {
      const { row, stored } = begin.immediate(turnId, entries, calls);
      return { turn: toTurn(row), entries: stored };
    },
    async append(turnId, entries, calls = []) {
      return appendTx.immediate(turnId, entries, calls);
    },
    async finish(turnId, end) {
      const { row, stored, delivery } = finish.immediate(turnId, end);
      return { turn: toTurn(row), entries: stored, ...(delivery ? { delivery } : {}) };
    },
    async setState(turnId, state, info) {
      setStateTx.immediate(turnId, state, info?.reason ?? null, info?.error ?? null, info?.usage ? JSON.stringify(info.usage) : null);
    },
    async suspendActive() {
      return suspend.run(Date.now()).changes;
    },
    async seen(channel, account, dedupeKey, text) {
      const dup = existingInbox.get(channel, account, dedupeKey);
      return dup ? duplicateOf(dup, text) : null;
    },
    async inbox(inboxId) {
      const row = inboxById.get(inboxId);
      return row ? toInboxItem(row) : null;
    },
    async summary(since) {
      const t = since.getTime();
      return turnSummary(statesSince.all(t), usageSince.all(t));
    },
  };
}
