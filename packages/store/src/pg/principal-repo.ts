import { randomUUID } from 'node:crypto';
import type { Storage } from '@switchboard/core';
import { type IdentityRow, type PrincipalRow, type TokenRow, toIdentity, toPrincipal, toToken } from '../rows.js';
import type { PgDb } from './db.js';

/** The principals repository (principals and their channel identities) over a PostgreSQL pool. */
export function pgPrincipalRepo(db: PgDb): Storage['principals'] {
  return {
    async create(p) {
      const row: PrincipalRow = { id: randomUUID(), name: p.name, role: p.role, created_at: Date.now() };
      await db.run('INSERT INTO principals (id, name, role, created_at) VALUES ($1, $2, $3, $4)', [row.id, row.name, row.role, row.created_at]);
      return toPrincipal(row);
    },
    async get(id) {
      const row = await db.row<PrincipalRow>('SELECT * FROM principals WHERE id = $1', [id]);
      return row ? toPrincipal(row) : null;
    },
    async byName(name) {
      const row = await db.row<PrincipalRow>('SELECT * FROM principals WHERE name = $1', [name]);
      return row ? toPrincipal(row) : null;
    },
    async list() {
      return (await db.rows<PrincipalRow>('SELECT * FROM principals ORDER BY created_at, rowid')).map(toPrincipal);
    },
    async count() {
      return (await db.row<{ n: number }>('SELECT count(*) AS n FROM principals'))?.n ?? 0;
    },
    async linkIdentity(principalId, channelType, externalId) {
      return db.tx(async (q) => {
        const existing = await q.row<IdentityRow>('SELECT * FROM identities WHERE channel_type = $1 AND external_id = $2', [channelType, externalId]);
        if (existing) {
          // Silently moving an identity to another principal would hand over their access.
          if (existing.principal_id !== principalId) {
            throw new Error(`identity ${channelType}/${externalId} is already linked to another principal`);
          }
          return toIdentity(existing);
        }
        const row: IdentityRow = { id: randomUUID(), principal_id: principalId, channel_type: channelType, external_id: externalId, created_at: Date.now() };
        await q.run('INSERT INTO identities (id, principal_id, channel_type, external_id, created_at) VALUES ($1, $2, $3, $4, $5)', [
          row.id,
          row.principal_id,
          row.channel_type,
          row.external_id,
          row.created_at,
        ]);
        return toIdentity(row);
      });
    },
    async byIdentity(channelType, externalId) {
      const row = await db.row<PrincipalRow>(
        `SELECT p.* FROM identities i JOIN principals p ON p.id = i.principal_id WHERE i.channel_type = $1 AND i.external_id = $2`,
        [channelType, externalId],
      );
      return row ? toPrincipal(row) : null;
    },
    async identities(principalId) {
      return (await db.rows<IdentityRow>('SELECT * FROM identities WHERE principal_id = $1 ORDER BY created_at, rowid', [principalId])).map(toIdentity);
    },
    async update(id, patch) {
      const row = await db.tx(async (q) => {
        const current = await q.row<PrincipalRow>('SELECT * FROM principals WHERE id = $1', [id]);
        if (!current) return undefined;
        return q.row<PrincipalRow>('UPDATE principals SET name = $1, role = $2 WHERE id = $3 RETURNING *', [patch.name ?? current.name, patch.role ?? current.role, id]);
      });
      return row ? toPrincipal(row) : null;
    },
    async unlinkIdentity(principalId, channelType, externalId) {
      return (await db.run('DELETE FROM identities WHERE principal_id = $1 AND channel_type = $2 AND external_id = $3', [principalId, channelType, externalId])) > 0;
    },
    async remove(id) {
      return db.tx(async (q) => {
        if (!(await q.row('SELECT 1 FROM principals WHERE id = $1', [id]))) return null;
        const identities = await q.run('DELETE FROM identities WHERE principal_id = $1', [id]);
        // Detached tokens keep their names for the audit trail; a client token without a principal never authenticates.
        const tokens = await q.run('UPDATE tokens SET revoked_at = coalesce(revoked_at, $1), principal_id = NULL WHERE principal_id = $2', [Date.now(), id]);
        // A profile row references the principal (ON DELETE CASCADE removes it).
        await q.run('DELETE FROM principals WHERE id = $1', [id]);
        return { identities, tokens };
      });
    },
  };
}

/** The API token repository over a PostgreSQL pool. */
export function pgTokenRepo(db: PgDb): Storage['tokens'] {
  return {
    async create(t) {
      const row: TokenRow = {
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
      await db.run(
        `INSERT INTO tokens (id, secret_hash, kind, name, principal_id, scopes, created_at, expires_at, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [row.id, row.secret_hash, row.kind, row.name, row.principal_id, row.scopes, row.created_at, row.expires_at, row.created_by],
      );
      return toToken(row);
    },
    async byHash(secretHash) {
      const row = await db.row<TokenRow>('SELECT * FROM tokens WHERE secret_hash = $1', [secretHash]);
      return row ? toToken(row) : null;
    },
    async get(id) {
      const row = await db.row<TokenRow>('SELECT * FROM tokens WHERE id = $1', [id]);
      return row ? toToken(row) : null;
    },
    async list() {
      return (await db.rows<TokenRow>('SELECT * FROM tokens ORDER BY created_at, rowid')).map(toToken);
    },
    async revoke(id) {
      return (await db.run('UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [Date.now(), id])) > 0;
    },
    async touch(id, at, minIntervalMs) {
      // The interval test is in the UPDATE, so concurrent requests (or two replicas) write at most once per interval.
      return (await db.run('UPDATE tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at <= $3)', [at.getTime(), id, at.getTime() - minIntervalMs])) > 0;
    },
  };
}
