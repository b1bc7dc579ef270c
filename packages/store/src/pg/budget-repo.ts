import type { Storage } from '@switchboard/core';
import { type BudgetOverrideRow, toBudgetOverride } from '../budget-repo.js';
import type { PgDb } from './db.js';

/** Operators' budget overrides over a PostgreSQL pool. */
export function pgBudgetRepo(db: PgDb): Storage['budgets'] {
  return {
    async list() {
      // Byte order, as SQLite sorts text (the database's collation may be a locale's).
      const rows = await db.rows<BudgetOverrideRow>(
        'SELECT scope, scope_id, spec, updated_by, updated_at FROM budget_overrides ORDER BY scope COLLATE "C", scope_id COLLATE "C"',
      );
      return rows.flatMap((r) => toBudgetOverride(r) ?? []);
    },
    async set(scope, id, spec, by) {
      if (spec === null) {
        await db.run('DELETE FROM budget_overrides WHERE scope = $1 AND scope_id = $2', [scope, id]);
        return;
      }
      await db.run(
        `INSERT INTO budget_overrides (scope, scope_id, spec, updated_by, updated_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (scope, scope_id) DO UPDATE SET spec = excluded.spec, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
        [scope, id, JSON.stringify(spec), by, Date.now()],
      );
    },
  };
}
