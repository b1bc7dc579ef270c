import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { DeadLetter, DeadLetterInput, Storage } from '@switchboard/core';
import type { InboxRow } from './rows.js';

/** An `inbox` row that was given up on. */
export interface DeadRow extends Omit<InboxRow, 'turn_id'> {
  failed_at: number;
  error: string | null;
  attempts: number | null;
}

/** What a dead letter's inbox `payload` holds: the summary and who sent it, never the raw item. */
interface DeadPayload {
  deadLetter: true;
  summary: string;
  conversation?: string;
  sender?: string;
}

/** A dead-letter row as a {@link DeadLetter}. */
export function toDeadLetter(r: DeadRow): DeadLetter {
  let p: Partial<DeadPayload> = {};
  try {
    const parsed = JSON.parse(r.payload) as unknown;
    if (parsed && typeof parsed === 'object') p = parsed as Partial<DeadPayload>;
  } catch {
    // A row written by an older version: the summary stays empty.
  }
  return {
    id: r.id,
    channel: r.channel,
    account: r.account,
    dedupeKey: r.dedupe_key,
    ...(typeof p.conversation === 'string' ? { conversation: p.conversation } : {}),
    ...(typeof p.sender === 'string' ? { sender: p.sender } : {}),
    summary: typeof p.summary === 'string' ? p.summary : '',
    error: r.error ?? '',
    attempts: r.attempts ?? 0,
    receivedAt: new Date(r.received_at),
    failedAt: new Date(r.failed_at),
  };
}

/** The inbox `payload` of a dead letter (JSON): the summary and who sent it. */
export function deadPayload(d: DeadLetterInput): string {
  const payload: DeadPayload = {
    deadLetter: true,
    summary: d.summary,
    ...(d.conversation !== undefined ? { conversation: d.conversation } : {}),
    ...(d.sender !== undefined ? { sender: d.sender } : {}),
  };
  return JSON.stringify(payload);
}

/** Dead letters: failed inbox rows (`failed_at` set). */
export function deadLetterRepo(db: Database): Storage['deadLetters'] {
  const insert = db.prepare<[string, string, string, string, string, number, number, string, number]>(
    `INSERT INTO inbox (id, channel, account, dedupe_key, payload, received_at, failed_at, error, attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (channel, account, dedupe_key) DO NOTHING`,
  );
  const markExisting = db.prepare<[number, string, number, string, string, string], { id: string }>(
    `UPDATE inbox SET failed_at = ?, error = ?, attempts = ? WHERE channel = ? AND account = ? AND dedupe_key = ? AND turn_id IS NULL RETURNING id`,
  );
  const existing = db.prepare<[string, string, string], { id: string }>('SELECT id FROM inbox WHERE channel = ? AND account = ? AND dedupe_key = ?');
  const list = db.prepare<[string | null, string | null, number], DeadRow>(
    `SELECT id, channel, account, dedupe_key, payload, received_at, failed_at, error, attempts FROM inbox
     WHERE failed_at IS NOT NULL AND (? IS NULL OR channel || ':' || account = ?) ORDER BY failed_at DESC, rowid DESC LIMIT ?`,
  );
  const count = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM inbox WHERE failed_at IS NOT NULL');
  const record = db.transaction((d: DeadLetterInput): { id: string; existed: boolean } => {
    const id = randomUUID();
    const now = Date.now();
    const error = d.error.slice(0, 2000);
    if (insert.run(id, d.channel, d.account, d.dedupeKey, deadPayload(d), d.receivedAt.getTime(), now, error, d.attempts).changes === 1)
      return { id, existed: false };
    const marked = markExisting.get(now, error, d.attempts, d.channel, d.account, d.dedupeKey);
    return { id: marked?.id ?? existing.get(d.channel, d.account, d.dedupeKey)?.id ?? id, existed: true };
  });
  return {
    async record(d) {
      return record.immediate(d);
    },
    async list(opts = {}) {
      const ch = opts.channel ?? null;
      return list.all(ch, ch, Math.min(Math.max(opts.limit ?? 100, 1), 1000)).map(toDeadLetter);
    },
    async count() {
      return count.get()?.n ?? 0;
    },
  };
}
