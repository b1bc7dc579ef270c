import type { Storage } from '@switchboard/core';
import { type ProfileRow, profileOf } from '../profile-repo.js';
import type { PgDb } from './db.js';

/** People's profiles over a PostgreSQL pool: one row per principal, removed with it (foreign key, cascade). */
export function pgProfileRepo(db: PgDb): Storage['profiles'] {
  return {
    async get(principalId) {
      const row = await db.row<ProfileRow>('SELECT fields, updated_by, updated_at FROM principal_profiles WHERE principal_id = $1', [principalId]);
      return row ? { profile: profileOf(row.fields), updatedBy: row.updated_by, updatedAt: new Date(row.updated_at) } : null;
    },
    async put(principalId, profile, by) {
      const fields = profileOf(JSON.stringify(profile));
      return db.tx(async (q) => {
        if (!(await q.row('SELECT id FROM principals WHERE id = $1', [principalId]))) return false;
        if (Object.keys(fields).length === 0) await q.run('DELETE FROM principal_profiles WHERE principal_id = $1', [principalId]);
        else {
          await q.run(
            `INSERT INTO principal_profiles (principal_id, fields, updated_by, updated_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT (principal_id) DO UPDATE SET fields = excluded.fields, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
            [principalId, JSON.stringify(fields), by, Date.now()],
          );
        }
        return true;
      });
    },
  };
}

/** Approved instruction-file hashes over a PostgreSQL pool: one row per (workspace, file). */
export function pgInstructionFileRepo(db: PgDb): Storage['instructionFiles'] {
  return {
    async approved(workspace, path) {
      return (await db.row<{ sha256: string }>('SELECT sha256 FROM instruction_files WHERE workspace = $1 AND path = $2', [workspace, path]))?.sha256 ?? null;
    },
    async approve(workspace, path, sha256) {
      await db.run(
        `INSERT INTO instruction_files (workspace, path, sha256, approved_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (workspace, path) DO UPDATE SET sha256 = excluded.sha256, approved_at = excluded.approved_at`,
        [workspace, path, sha256, Date.now()],
      );
    },
  };
}
