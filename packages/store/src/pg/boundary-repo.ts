import type { InboundMessage, NewPairingRequest, PairingLimits, PairingOutcome, PairingRequest, Storage } from '@switchboard/core';
import { type OverrideRow, type PairingRow, reviveMessage, toOverride, toPairing, WITH_HELD } from '../boundary-repo.js';
import type { PgDb, Sql } from './db.js';

const byCode = async (q: Sql, code: string): Promise<PairingRow | undefined> => q.row<PairingRow>(`${WITH_HELD} WHERE p.code = $1`, [code]);

/** Decides a pending request inside a transaction; a discarded one (not approved) loses its held messages. */
async function decideIn(q: Sql, code: string, status: string, by: string, principalId: string | null): Promise<boolean> {
  const changed = await q.run(`UPDATE pairing_requests SET status = $1, decided_by = $2, principal_id = $3 WHERE code = $4 AND status = 'pending'`, [
    status,
    by,
    principalId,
    code,
  ]);
  if (changed !== 1) return false;
  if (status !== 'approved') await q.run('DELETE FROM pairing_held WHERE code = $1', [code]);
  return true;
}

/**
 * One message of an unknown sender, inside a SERIALIZABLE transaction (so it may run more than
 * once: everything it does is in `q`). Two senders at once see each other's requests as if one
 * came first: one pending request per identity, never more than `maxPending` per account.
 */
async function requestOrHoldIn(q: Sql, r: NewPairingRequest, lim: PairingLimits): Promise<PairingOutcome> {
  // First statement, so before the transaction's snapshot: callers queue here (as SQLite's writers
  // do) and each reads what the previous one committed. Without it, concurrent first messages all
  // read, collide and retry (the per-account count makes every two requests conflict).
  await q.run('LOCK TABLE pairing_requests IN SHARE ROW EXCLUSIVE MODE');
  const now = Date.now();
  const json = JSON.stringify(r.message);
  const bytes = Buffer.byteLength(json);
  const existing = await q.row<PairingRow>(`${WITH_HELD} WHERE p.channel = $1 AND p.account = $2 AND p.identity = $3 AND p.status = 'pending'`, [
    r.channel,
    r.account,
    r.identity,
  ]);
  if (existing && existing.expires_at > now) {
    // A redelivered message (same dedupe key) is held once.
    if (await q.row('SELECT id FROM pairing_held WHERE code = $1 AND dedupe_key = $2', [existing.code, r.message.dedupeKey])) {
      return { kind: 'duplicate', request: toPairing(existing) };
    }
    // Once a message was not kept, none after it is (the sender was told so): order is kept.
    const over = existing.overflow_notified === 1 || existing.held_count >= lim.maxHeld || existing.held_bytes + bytes > lim.maxHeldBytes;
    if (over) {
      const limit = existing.held_count >= lim.maxHeld ? 'maxHeld' : 'maxHeldBytes';
      const first = existing.overflow_notified === 0;
      if (first) await q.run('UPDATE pairing_requests SET overflow_notified = 1 WHERE code = $1', [existing.code]);
      return { kind: 'overflow', request: toPairing(existing), limit, first };
    }
    await q.run('INSERT INTO pairing_held (code, dedupe_key, message, bytes, created_at) VALUES ($1, $2, $3, $4, $5)', [
      existing.code,
      r.message.dedupeKey,
      json,
      bytes,
      now,
    ]);
    return { kind: 'held', request: toPairing((await byCode(q, existing.code))!) };
  }
  if (existing) await decideIn(q, existing.code, 'expired', 'system', null);
  const last =
    (
      await q.row<{ at: number | null }>('SELECT max(created_at) AS at FROM pairing_requests WHERE channel = $1 AND account = $2 AND identity = $3', [
        r.channel,
        r.account,
        r.identity,
      ])
    )?.at ?? null;
  if (last !== null && now - last < lim.cooldown) return { kind: 'cooldown', retryAt: new Date(last + lim.cooldown) };
  let evicted: PairingRequest | null = null;
  const pending =
    (
      await q.row<{ n: number }>(`SELECT count(*) AS n FROM pairing_requests WHERE channel = $1 AND account = $2 AND status = 'pending' AND expires_at > $3`, [
        r.channel,
        r.account,
        now,
      ])
    )?.n ?? 0;
  if (pending >= lim.maxPending) {
    const oldest = await q.row<PairingRow>(
      `${WITH_HELD} WHERE p.channel = $1 AND p.account = $2 AND p.status = 'pending' AND p.expires_at > $3 ORDER BY p.created_at, p.rowid LIMIT 1`,
      [r.channel, r.account, now],
    );
    if (oldest && (await decideIn(q, oldest.code, 'expired', 'system', null))) evicted = { ...toPairing(oldest), status: 'expired', decidedBy: 'system' };
  }
  const kept = bytes <= lim.maxHeldBytes;
  await q.run(
    `INSERT INTO pairing_requests (code, channel, account, identity, display_name, conversation, overflow_notified, status, principal_id,
       decided_by, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', NULL, NULL, $8, $9)`,
    [r.code, r.channel, r.account, r.identity, r.displayName, JSON.stringify(r.conversation), kept ? 0 : 1, now, r.expiresAt.getTime()],
  );
  if (kept) {
    await q.run('INSERT INTO pairing_held (code, dedupe_key, message, bytes, created_at) VALUES ($1, $2, $3, $4, $5)', [
      r.code,
      r.message.dedupeKey,
      json,
      bytes,
      now,
    ]);
  }
  return { kind: 'created', request: toPairing((await byCode(q, r.code))!), evicted, kept };
}

/** Pairing requests (held messages one row each) and channel policy overrides over a PostgreSQL pool. */
export function pgBoundaryRepos(db: PgDb): Pick<Storage, 'pairing' | 'policies'> {
  return {
    pairing: {
      async requestOrHold(r, limits) {
        return db.tx((q) => requestOrHoldIn(q, r, limits));
      },
      async heldSeen(channel, account, identity, dedupeKey) {
        const row = await db.row<PairingRow>(
          `${WITH_HELD} WHERE p.channel = $1 AND p.account = $2 AND p.identity = $3
             AND EXISTS (SELECT 1 FROM pairing_held h WHERE h.code = p.code AND h.dedupe_key = $4)
           ORDER BY p.created_at DESC, p.rowid DESC LIMIT 1`,
          [channel, account, identity, dedupeKey],
        );
        return row ? toPairing(row) : null;
      },
      async held(code) {
        return (await db.rows<{ message: string }>('SELECT message FROM pairing_held WHERE code = $1 ORDER BY id', [code]))
          .map((r) => JSON.parse(r.message) as (InboundMessage & { receivedAt: string }) | null)
          .filter((m): m is InboundMessage & { receivedAt: string } => m !== null)
          .map(reviveMessage);
      },
      async forgetHeld(code) {
        await db.run(`UPDATE pairing_held SET message = 'null' WHERE code = $1`, [code]);
      },
      async get(code) {
        const row = await byCode(db, code);
        return row ? toPairing(row) : null;
      },
      async list(filter = {}) {
        const rows = await db.rows<PairingRow>(
          `${WITH_HELD} WHERE ($1::text IS NULL OR p.status = $1) AND ($2::text IS NULL OR p.channel = $2)
             AND ($3::text IS NULL OR p.account = $3) ORDER BY p.created_at, p.rowid`,
          [filter.status ?? null, filter.channel ?? null, filter.account ?? null],
        );
        return rows.map(toPairing);
      },
      async decide(code, status, by, principalId = null) {
        return db.tx((q) => decideIn(q, code, status, by, principalId));
      },
      async expired(now) {
        return (await db.rows<PairingRow>(`${WITH_HELD} WHERE p.status = 'pending' AND p.expires_at <= $1`, [now.getTime()])).map(toPairing);
      },
    },
    policies: {
      async list(channelId) {
        // Byte order, as SQLite sorts text (the database's collation may be a locale's).
        const rows = await db.rows<OverrideRow>(
          'SELECT * FROM policy_overrides WHERE ($1::text IS NULL OR channel_id = $1) ORDER BY channel_id COLLATE "C", field COLLATE "C"',
          [channelId ?? null],
        );
        return rows.map(toOverride);
      },
      async set(channelId, field, value, by) {
        await db.run(
          `INSERT INTO policy_overrides (channel_id, field, value, updated_by, updated_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (channel_id, field) DO UPDATE SET value = excluded.value, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
          [channelId, field, JSON.stringify(value), by, Date.now()],
        );
      },
      async remove(channelId, field) {
        return (await db.run('DELETE FROM policy_overrides WHERE channel_id = $1 AND field = $2', [channelId, field])) === 1;
      },
    },
  };
}
