import type { Database } from 'better-sqlite3';
import type { InboundMessage, PairingRequest, PolicyOverride, Storage } from '@switchboard/core';

interface PairingRow {
  code: string;
  channel: string;
  account: string;
  identity: string;
  display_name: string | null;
  conversation: string;
  held: string;
  status: string;
  principal_id: string | null;
  decided_by: string | null;
  created_at: number;
  expires_at: number;
}

interface OverrideRow {
  channel_id: string;
  field: string;
  value: string;
  updated_by: string;
  updated_at: number;
}

const reviveMessage = (m: InboundMessage & { receivedAt: string | Date }): InboundMessage => ({ ...m, receivedAt: new Date(m.receivedAt) });

const toPairing = (r: PairingRow): PairingRequest => ({
  code: r.code,
  channel: r.channel,
  account: r.account,
  identity: r.identity,
  displayName: r.display_name,
  conversation: JSON.parse(r.conversation) as PairingRequest['conversation'],
  held: (JSON.parse(r.held) as Array<InboundMessage & { receivedAt: string }>).map(reviveMessage),
  status: r.status as PairingRequest['status'],
  principalId: r.principal_id,
  decidedBy: r.decided_by,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
});

const toOverride = (r: OverrideRow): PolicyOverride => ({
  channelId: r.channel_id,
  field: r.field,
  value: JSON.parse(r.value) as unknown,
  updatedBy: r.updated_by,
  updatedAt: new Date(r.updated_at),
});

/** Pairing requests (with held messages) and channel policy overrides over one SQLite handle. */
export function boundaryRepos(db: Database): Pick<Storage, 'pairing' | 'policies'> {
  const pendingOf = db.prepare<[string, string, string], PairingRow>(
    `SELECT * FROM pairing_requests WHERE channel = ? AND account = ? AND identity = ? AND status = 'pending'`,
  );
  const countPending = db.prepare<[string, string, number], { n: number }>(
    `SELECT count(*) AS n FROM pairing_requests WHERE channel = ? AND account = ? AND status = 'pending' AND expires_at > ?`,
  );
  const insert = db.prepare<[PairingRow]>(
    `INSERT INTO pairing_requests (code, channel, account, identity, display_name, conversation, held, status, principal_id,
       decided_by, created_at, expires_at)
     VALUES (@code, @channel, @account, @identity, @display_name, @conversation, @held, @status, @principal_id,
       @decided_by, @created_at, @expires_at)`,
  );
  const setHeld = db.prepare<[string, string]>('UPDATE pairing_requests SET held = ? WHERE code = ?');
  const byCode = db.prepare<[string], PairingRow>('SELECT * FROM pairing_requests WHERE code = ?');
  const list = db.prepare<[{ status: string | null; channel: string | null; account: string | null }], PairingRow>(
    `SELECT * FROM pairing_requests WHERE (@status IS NULL OR status = @status) AND (@channel IS NULL OR channel = @channel)
       AND (@account IS NULL OR account = @account) ORDER BY created_at, rowid`,
  );
  const decide = db.prepare<[string, string, string | null, string]>(
    `UPDATE pairing_requests SET status = ?, decided_by = ?, principal_id = ? WHERE code = ? AND status = 'pending'`,
  );
  const expired = db.prepare<[number], PairingRow>(`SELECT * FROM pairing_requests WHERE status = 'pending' AND expires_at <= ?`);
  const listOverrides = db.prepare<[{ channel: string | null }], OverrideRow>(
    'SELECT * FROM policy_overrides WHERE (@channel IS NULL OR channel_id = @channel) ORDER BY channel_id, field',
  );
  const upsertOverride = db.prepare<[OverrideRow]>(
    `INSERT INTO policy_overrides (channel_id, field, value, updated_by, updated_at) VALUES (@channel_id, @field, @value, @updated_by, @updated_at)
     ON CONFLICT (channel_id, field) DO UPDATE SET value = excluded.value, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
  );
  const removeOverride = db.prepare<[string, string]>('DELETE FROM policy_overrides WHERE channel_id = ? AND field = ?');

  type Req = Parameters<Storage['pairing']['requestOrHold']>[0];
  const requestOrHold = db.transaction((r: Req, maxPending: number) => {
    const existing = pendingOf.get(r.channel, r.account, r.identity);
    if (existing && existing.expires_at > Date.now()) {
      const held = JSON.parse(existing.held) as InboundMessage[];
      // A redelivered message (same dedupe key) is held once.
      if (!held.some((m) => m.dedupeKey === r.message.dedupeKey)) {
        held.push(r.message);
        setHeld.run(JSON.stringify(held), existing.code);
      }
      return { request: toPairing(byCode.get(existing.code)!), created: false };
    }
    if (existing) decide.run('expired', 'system', null, existing.code);
    if (countPending.get(r.channel, r.account, Date.now())!.n >= maxPending) return { full: true as const };
    insert.run({
      code: r.code,
      channel: r.channel,
      account: r.account,
      identity: r.identity,
      display_name: r.displayName,
      conversation: JSON.stringify(r.conversation),
      held: JSON.stringify([r.message]),
      status: 'pending',
      principal_id: null,
      decided_by: null,
      created_at: Date.now(),
      expires_at: r.expiresAt.getTime(),
    });
    return { request: toPairing(byCode.get(r.code)!), created: true };
  });

  return {
    pairing: {
      async requestOrHold(r, maxPending) {
        return requestOrHold.immediate(r, maxPending);
      },
      async get(code) {
        const row = byCode.get(code);
        return row ? toPairing(row) : null;
      },
      async list(filter = {}) {
        return list.all({ status: filter.status ?? null, channel: filter.channel ?? null, account: filter.account ?? null }).map(toPairing);
      },
      async decide(code, status, by, principalId = null) {
        return decide.run(status, by, principalId, code).changes === 1;
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
