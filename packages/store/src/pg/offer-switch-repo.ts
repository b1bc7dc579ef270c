import type { Storage } from '@switchboard/core';
import { type OfferRow, toSwitch } from '../offer-switch-repo.js';
import type { PgDb } from './db.js';

/** Operators' offer-switches over a PostgreSQL pool: one row per (tool, scope kind, scope id). */
export function pgOfferSwitchRepo(db: PgDb): Storage['offerSwitches'] {
  return {
    async list() {
      const rows = await db.rows<OfferRow>('SELECT tool, scope_kind, scope_id, created_by, created_at FROM offer_switches ORDER BY created_at, rowid');
      return rows.flatMap((r) => toSwitch(r) ?? []);
    },
    async put(s) {
      const changed = await db.run(
        `INSERT INTO offer_switches (tool, scope_kind, scope_id, created_by, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tool, scope_kind, scope_id) DO NOTHING`,
        [s.tool, s.scopeKind, s.scopeId ?? '', s.createdBy, Date.now()],
      );
      return changed === 1;
    },
    async remove(tool, scopeKind, scopeId) {
      return (await db.run('DELETE FROM offer_switches WHERE tool = $1 AND scope_kind = $2 AND scope_id = $3', [tool, scopeKind, scopeId ?? ''])) === 1;
    },
  };
}
