import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Storage } from '@switchboard/core';
import { type IdentityRow, type PrincipalRow, type TokenRow, toIdentity, toPrincipal, toToken } from './rows.js';

/** The principals repository (principals and their channel identities) over one SQLite handle. */
export function principalRepo(db: Database): Storage['principals'] {
  const insert = db.prepare<[string, string, string, number]>('INSERT INTO principals (id, name, role, created_at) VALUES (?, ?, ?, ?)');
  const byId = db.prepare<[string], PrincipalRow>('SELECT * FROM principals WHERE id = ?');
  const byName = db.prepare<[string], PrincipalRow>('SELECT * FROM principals WHERE name = ?');
  const all = db.prepare<[], PrincipalRow>('SELECT * FROM principals ORDER BY created_at, rowid');
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM principals');
  const identityOf = db.prepare<[string, string], IdentityRow>('SELECT * FROM identities WHERE channel_type = ? AND external_id = ?');
  const insertIdentity = db.prepare<[string, string, string, string, number]>(
    'INSERT INTO identities (id, principal_id, channel_type, external_id, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const byIdentity = db.prepare<[string, string], PrincipalRow>(
    `SELECT p.* FROM identities i JOIN principals p ON p.id = i.principal_id
     WHERE i.channel_type = ? AND i.external_id = ?`,
  );
  const identitiesOf = db.prepare<[string], IdentityRow>('SELECT * FROM identities WHERE principal_id = ? ORDER BY created_at, rowid');

  const rename = db.prepare<[string, string, string], PrincipalRow>('UPDATE principals SET name = ?, role = ? WHERE id = ? RETURNING *');
  const unlink = db.prepare<[string, string, string]>('DELETE FROM identities WHERE principal_id = ? AND channel_type = ? AND external_id = ?');
  const unlinkAll = db.prepare<[string]>('DELETE FROM identities WHERE principal_id = ?');
  // Detached tokens keep their names for the audit trail; a client token without a principal never authenticates.
  const detachTokens = db.prepare<[number, string]>('UPDATE tokens SET revoked_at = coalesce(revoked_at, ?), principal_id = NULL WHERE principal_id = ?');
  const deleteOne = db.prepare<[string]>('DELETE FROM principals WHERE id = ?');

  const update = db.transaction((id: string, patch: { name?: string; role?: string }) => {
    const row = byId.get(id);
    if (!row) return null;
    return rename.get(patch.name ?? row.name, patch.role ?? row.role, id) ?? null;
  });
  const remove = db.transaction((id: string) => {
    if (!byId.get(id)) return null;
    const identities = unlinkAll.run(id).changes;
    const tokens = detachTokens.run(Date.now(), id).changes;
    deleteOne.run(id);
    return { identities, tokens };
  });

  const link = db.transaction((principalId: string, channelType: string, externalId: string) => {
    const existing = identityOf.get(channelType, externalId);
    if (existing) {
      // Silently moving an identity to another principal would hand over their access.
      if (existing.principal_id !== principalId) {
        throw new Error(`identity ${channelType}/${externalId} is already linked to another principal`);
      }
      return toIdentity(existing);
    }
    const row: IdentityRow = {
      id: randomUUID(),
      principal_id: principalId,
      channel_type: channelType,
      external_id: externalId,
      created_at: Date.now(),
    };
    insertIdentity.run(row.id, row.principal_id, row.channel_type, row.external_id, row.created_at);
    return toIdentity(row);
  });

  return {
    async create(p) {
      const row: PrincipalRow = { id: randomUUID(), name: p.name, role: p.role, created_at: Date.now() };
      insert.run(row.id, row.name, row.role, row.created_at);
      return toPrincipal(row);
    },
    async get(id) {
      const row = byId.get(id);
      return row ? toPrincipal(row) : null;
    },
    async byName(name) {
      const row = byName.get(name);
      return row ? toPrincipal(row) : null;
    },
    async list() {
      return all.all().map(toPrincipal);
    },
    async count() {
      return count.get()?.n ?? 0;
    },
    async linkIdentity(principalId, channelType, externalId) {
      return link.immediate(principalId, channelType, externalId);
    },
    async byIdentity(channelType, externalId) {
      const row = byIdentity.get(channelType, externalId);
      return row ? toPrincipal(row) : null;
    },
    async identities(principalId) {
      return identitiesOf.all(principalId).map(toIdentity);
    },
    async update(id, patch) {
      const row = update.immediate(id, patch);
      return row ? toPrincipal(row) : null;
    },
    async unlinkIdentity(principalId, channelType, externalId) {
      return unlink.run(principalId, channelType, externalId).changes > 0;
    },
    async remove(id) {
      return remove.immediate(id);
    },
  };
}

/** The row of a new token (both engines): only the secret's hash is kept. */
export function newTokenRow(t: Parameters<Storage['tokens']['create']>[0]): TokenRow {
  return {
    id: randomUUID(),
    secret_hash: t.secretHash,
    kind: t.kind,
    name: t.name,
    principal_id: t.principalId,
    scopes: JSON.stringify(t.scopes),
    created_at: Date.now(),
    revoked_at: null,
    expires_at: t.expiresAt ? t.expiresAt.getTime() : null,
    last_used_at: null,
    created_by: t.createdBy ?? null,
  };
}

/** The API token repository over one SQLite handle. */
export function tokenRepo(db: Database): Storage['tokens'] {
  const insert = db.prepare<[string, string, string, string, string | null, string, number, number | null, string | null]>(
    `INSERT INTO tokens (id, secret_hash, kind, name, principal_id, scopes, created_at, expires_at, created_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byHash = db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE secret_hash = ?');
  const tokenById = db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE id = ?');
  const all = db.prepare<[], TokenRow>('SELECT * FROM tokens ORDER BY created_at, rowid');
  const revoke = db.prepare<[number, string]>('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  // The interval test is in the UPDATE, so concurrent requests (or two processes) write at most once per interval.
  const touch = db.prepare<[number, string, number]>('UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)');

  return {
    async create(t) {
      const row = newTokenRow(t);
      insert.run(row.id, row.secret_hash, row.kind, row.name, row.principal_id, row.scopes, row.created_at, row.expires_at, row.created_by);
      return toToken(row);
    },
    async byHash(secretHash) {
      const row = byHash.get(secretHash);
      return row ? toToken(row) : null;
    },
    async get(id) {
      const row = tokenById.get(id);
      return row ? toToken(row) : null;
    },
    async list() {
      return all.all().map(toToken);
    },
    async revoke(id) {
      return revoke.run(Date.now(), id).changes > 0;
    },
    async touch(id, at, minIntervalMs) {
      return touch.run(at.getTime(), id, at.getTime() - minIntervalMs).changes > 0;
    },
  };
}
