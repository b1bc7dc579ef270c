import type { Database } from 'better-sqlite3';
import type { InboundMessage, NewPairingRequest, PairingLimits, PairingOutcome, PairingRequest, PolicyOverride, Storage } from '@switchboard/core';

/** A `pairing_requests` row with its held messages counted (see {@link WITH_HELD}). */
export interface PairingRow {
  code: string;
  channel: string;
  account: string;
  identity: string;
  display_name: string | null;
  conversation: string;
  overflow_notified: number;
  status: string;
  principal_id: string | null;
  decided_by: string | null;
  created_at: number;
  expires_at: number;
  held_count: number;
  held_bytes: number;
}

/** A `policy_overrides` row. */
export interface OverrideRow {
  channel_id: string;
  field: string;
  value: string;
  updated_by: string;
  updated_at: number;
}

/** A held message read back from JSON (its date revived). */
export const reviveMessage = (m: InboundMessage & { receivedAt: string | Date }): InboundMessage => ({ ...m, receivedAt: new Date(m.receivedAt) });

/** A stored pairing row as the core type. */
export const toPairing = (r: PairingRow): PairingRequest => ({
  code: r.code,
  channel: r.channel,
  account: r.account,
  identity: r.identity,
  displayName: r.display_name,
  conversation: JSON.parse(r.conversation) as PairingRequest['conversation'],
  heldCount: r.held_count,
  heldBytes: r.held_bytes,
  status: r.status as PairingRequest['status'],
  principalId: r.principal_id,
  decidedBy: r.decided_by,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
});

/** A stored policy override row as the core type. */
export const toOverride = (r: OverrideRow): PolicyOverride => ({
  channelId: r.channel_id,
  field: r.field,
  value: JSON.parse(r.value) as unknown,
  updatedBy: r.updated_by,
  updatedAt: new Date(r.updated_at),
});

/** Pairing requests (`p`) with their held messages' count and bytes: the same SQL on both engines. */
export const WITH_HELD = `SELECT p.*,
    (SELECT count(*) FROM pairing_held h WHERE h.code = p.code) AS held_count,
    (SELECT coalesce(sum(h.bytes), 0) FROM pairing_held h WHERE h.code = p.code) AS held_bytes
  FROM pairing_requests p`;

/** Pairing requests (held messages one row each) and channel policy overrides over one SQLite handle. */
export function boundaryRepos(db: Database): Pick<Storage, 'pairing' | 'policies'> {
  const pendingOf = db.prepare<[string, string, string], PairingRow>(
    `${WITH_HELD} WHERE p.channel = ? AND p.account = ? AND p.identity = ? AND p.status = 'pending'`,
  );
  const lastCreated = db.prepare<[string, string, string], { at: number | null }>(
    'SELECT max(created_at) AS at FROM pairing_requests WHERE channel = ? AND account = ? AND identity = ?',
  );
  const countPending = db.prepare<[string, string, number], { n: number }>(
    `SELECT count(*) AS n FROM pairing_requests WHERE channel = ? AND account = ? AND status = 'pending' AND expires_at > ?`,
  );
  const oldestPending = db.prepare<[string, string, number], PairingRow>(
    `${WITH_HELD} WHERE p.channel = ? AND p.account = ? AND p.status = 'pending' AND p.expires_at > ? ORDER BY p.created_at, p.rowid LIMIT 1`,
  );
  const insert = db.prepare<[Omit<PairingRow, 'held_count' | 'held_bytes'>]>(
    `INSERT INTO pairing_requests (code, channel, account, identity, display_name, conversation, overflow_notified, status, principal_id,
       decided_by, created_at, expires_at)
     VALUES (@code, @channel, @account, @identity, @display_name, @conversation, @overflow_notified, @status, @principal_id,
       @decided_by, @created_at, @expires_at)`,
  );
  const insertHeld = db.prepare<[string, string, string, number, number]>(
    'INSERT INTO pairing_held (code, dedupe_key, message, bytes, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const hasHeld = db.prepare<[string, string], { id: number }>('SELECT id FROM pairing_held WHERE code = ? AND dedupe_key = ?');
  const heldOf = db.prepare<[string], { message: string }>('SELECT message FROM pairing_held WHERE code = ? ORDER BY id');
  const forgetHeld = db.prepare<[string]>(`UPDATE pairing_held SET message = 'null' WHERE code = ?`);
  const dropHeld = db.prepare<[string]>('DELETE FROM pairing_held WHERE code = ?');
  const markOverflow = db.prepare<[string]>('UPDATE pairing_requests SET overflow_notified = 1 WHERE code = ?');
  const heldSeen = db.prepare<[string, string, string, string], PairingRow>(
    `${WITH_HELD} WHERE p.channel = ? AND p.account = ? AND p.identity = ?
       AND EXISTS (SELECT 1 FROM pairing_held h WHERE h.code = p.code AND h.dedupe_key = ?)
     ORDER BY p.created_at DESC LIMIT 1`,
  );
  const byCode = db.prepare<[string], PairingRow>(`${WITH_HELD} WHERE p.code = ?`);
  const list = db.prepare<[{ status: string | null; channel: string | null; account: string | null }], PairingRow>(
    `${WITH_HELD} WHERE (@status IS NULL OR p.status = @status) AND (@channel IS NULL OR p.channel = @channel)
       AND (@account IS NULL OR p.account = @account) ORDER BY p.created_at, p.rowid`,
  );
  const decideRow = db.prepare<[string, string, string | null, string]>(
    `UPDATE pairing_requests SET status = ?, decided_by = ?, principal_id = ? WHERE code = ? AND status = 'pending'`,
  );
  const expired = db.prepare<[number], PairingRow>(`${WITH_HELD} WHERE p.status = 'pending' AND p.expires_at <= ?`);
  const listOverrides = db.prepare<[{ channel: string | null }], OverrideRow>(
    'SELECT * FROM policy_overrides WHERE (@channel IS NULL OR channel_id = @channel) ORDER BY channel_id, field',
  );
  const upsertOverride = db.prepare<[OverrideRow]>(
    `INSERT INTO policy_overrides (channel_id, field, value, updated_by, updated_at) VALUES (@channel_id, @field, @value, @updated_by, @updated_at)
     ON CONFLICT (channel_id, field) DO UPDATE SET value = excluded.value, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
  );
  const removeOverride = db.prepare<[string, string]>('DELETE FROM policy_overrides WHERE channel_id = ? AND field = ?');

  /** Decides a pending request; a discarded one (not approved) loses its held messages. */
  const decide = db.transaction((code: string, status: string, by: string, principalId: string | null): boolean => {
    if (decideRow.run(status, by, principalId, code).changes !== 1) return false;
    if (status !== 'approved') dropHeld.run(code);
    return true;
  });

  const requestOrHold = db.transaction((r: NewPairingRequest, lim: PairingLimits): PairingOutcome => {
    const now = Date.now();
    const json = JSON.stringify(r.message);
    const bytes = Buffer.byteLength(json);
    const existing = pendingOf.get(r.channel, r.account, r.identity);
    if (existing && existing.expires_at > now) {
      // A redelivered message (same dedupe key) is held once.
      if (hasHeld.get(existing.code, r.message.dedupeKey)) return { kind: 'duplicate', request: toPairing(existing) };
      // Once a message was not kept, none after it is (the sender was told so): order is kept.
      const over = existing.overflow_notified === 1 || existing.held_count >= lim.maxHeld || existing.held_bytes + bytes > lim.maxHeldBytes;
      if (over) {
        const limit = existing.held_count >= lim.maxHeld ? 'maxHeld' : 'maxHeldBytes';
        const first = existing.overflow_notified === 0;
        if (first) markOverflow.run(existing.code);
        return { kind: 'overflow', request: toPairing(existing), limit, first };
      }
      insertHeld.run(existing.code, r.message.dedupeKey, json, bytes, now);
      return { kind: 'held', request: toPairing(byCode.get(existing.code)!) };
    }
    if (existing) decide(existing.code, 'expired', 'system', null);
    const last = lastCreated.get(r.channel, r.account, r.identity)?.at ?? null;
    if (last !== null && now - last < lim.cooldown) return { kind: 'cooldown', retryAt: new Date(last + lim.cooldown) };
    let evicted: PairingRequest | null = null;
    if (countPending.get(r.channel, r.account, now)!.n >= lim.maxPending) {
      const oldest = oldestPending.get(r.channel, r.account, now);
      if (oldest && decide(oldest.code, 'expired', 'system', null)) evicted = { ...toPairing(oldest), status: 'expired', decidedBy: 'system' };
    }
    const kept = bytes <= lim.maxHeldBytes;
    insert.run({
      code: r.code,
      channel: r.channel,
      account: r.account,
      identity: r.identity,
      display_name: r.displayName,
      conversation: JSON.stringify(r.conversation),
      overflow_notified: kept ? 0 : 1,
      status: 'pending',
      principal_id: null,
      decided_by: null,
      created_at: now,
      expires_at: r.expiresAt.getTime(),
    });
    if (kept) insertHeld.run(r.code, r.message.dedupeKey, json, bytes, now);
    return { kind: 'created', request: toPairing(byCode.get(r.code)!), evicted, kept };
  });

  return {
    pairing: {
      async requestOrHold(r, limits) {
        return requestOrHold.immediate(r, limits);
      },
      async heldSeen(channel, account, identity, dedupeKey) {
        const row = heldSeen.get(channel, account, identity, dedupeKey);
        return row ? toPairing(row) : null;
      },
      async held(code) {
        return heldOf
          .all(code)
          .map((r) => JSON.parse(r.message) as (InboundMessage & { receivedAt: string }) | null)
          .filter((m): m is InboundMessage & { receivedAt: string } => m !== null)
          .map(reviveMessage);
      },
      async forgetHeld(code) {
        forgetHeld.run(code);
      },
      async get(code) {
        const row = byCode.get(code);
        return row ? toPairing(row) : null;
      },
      async list(filter = {}) {
        return list.all({ status: filter.status ?? null, channel: filter.channel ?? null, account: filter.account ?? null }).map(toPairing);
      },
      async decide(code, status, by, principalId = null) {
        return decide.immediate(code, status, by, principalId);
      },
      async expired(now) {
        return expired.all(now.getTime()).map(toPairing);
      },
    },
    policies: {
      async list(channelId) {
        return listOverrides.all({ channel: channelId ?? null }).map(toOverride);
      },
      async set(channelId, field, value, by) {
        upsertOverride.run({ channel_id: channelId, field, value: JSON.stringify(value), updated_by: by, updated_at: Date.now() });
      },
      async remove(channelId, field) {
        return removeOverride.run(channelId, field).changes === 1;
      },
    },
  };
}
