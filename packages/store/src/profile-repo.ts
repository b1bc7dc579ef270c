import type { Database } from 'better-sqlite3';
import { PROFILE_FIELDS, type Profile, type Storage } from '@switchboard/core';

/** A `principal_profiles` row (without its key). */
export interface ProfileRow {
  fields: string;
  updated_by: string;
  updated_at: number;
}

/** The profile fields of a stored JSON object: only known string fields survive (anything else in the row is dropped). */
export function profileOf(json: string): Profile {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return {};
  }
  const out: Profile = {};
  if (typeof raw !== 'object' || raw === null) return out;
  for (const field of PROFILE_FIELDS) {
    const value: unknown = Object.hasOwn(raw, field) ? (raw as Record<string, unknown>)[field] : undefined;
    if (typeof value === 'string' && value !== '') out[field] = value;
  }
  return out;
}

/** People's profiles over one SQLite handle: one row per principal, removed with it (foreign key, cascade). */
export function profileRepo(db: Database): Storage['profiles'] {
  const get = db.prepare<[string], ProfileRow>('SELECT fields, updated_by, updated_at FROM principal_profiles WHERE principal_id = ?');
  const exists = db.prepare<[string], { id: string }>('SELECT id FROM principals WHERE id = ?');
  const upsert = db.prepare<[string, string, string, number]>(
    `INSERT INTO principal_profiles (principal_id, fields, updated_by, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (principal_id) DO UPDATE SET fields = excluded.fields, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
  );
  const remove = db.prepare<[string]>('DELETE FROM principal_profiles WHERE principal_id = ?');
  const put = db.transaction((principalId: string, profile: Profile, by: string): boolean => {
    if (!exists.get(principalId)) return false;
    const fields = profileOf(JSON.stringify(profile));
    if (Object.keys(fields).length === 0) remove.run(principalId);
    else upsert.run(principalId, JSON.stringify(fields), by, Date.now());
    return true;
  });
  return {
    async get(principalId) {
      const row = get.get(principalId);
      return row ? { profile: profileOf(row.fields), updatedBy: row.updated_by, updatedAt: new Date(row.updated_at) } : null;
    },
    async put(principalId, profile, by) {
      return put(principalId, profile, by);
    },
  };
}

/** Approved instruction-file hashes over one SQLite handle: one row per (workspace, file). */
export function instructionFileRepo(db: Database): Storage['instructionFiles'] {
  const get = db.prepare<[string, string], { sha256: string }>('SELECT sha256 FROM instruction_files WHERE workspace = ? AND path = ?');
  const upsert = db.prepare<[string, string, string, number]>(
    `INSERT INTO instruction_files (workspace, path, sha256, approved_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (workspace, path) DO UPDATE SET sha256 = excluded.sha256, approved_at = excluded.approved_at`,
  );
  return {
    async approved(workspace, path) {
      return get.get(workspace, path)?.sha256 ?? null;
    },
    async approve(workspace, path, sha256) {
      upsert.run(workspace, path, sha256, Date.now());
    },
  };
}
