import type { Database } from 'better-sqlite3';
import type { BudgetOverride, BudgetScope, BudgetSpec, Storage } from '@switchboard/core';

/** A `budget_overrides` row. */
export interface BudgetOverrideRow {
  scope: string;
  scope_id: string;
  spec: string;
  updated_by: string;
  updated_at: number;
}

const SCOPES: ReadonlySet<string> = new Set<BudgetScope>(['gateway', 'agent', 'role', 'principal']);

/** A stored row as an override; a row with an unknown scope or an unreadable spec is skipped (null). */
export function toBudgetOverride(r: BudgetOverrideRow): BudgetOverride | null {
  if (!SCOPES.has(r.scope)) return null;
  let spec: unknown;
  try {
    spec = JSON.parse(r.spec);
  } catch {
    return null;
  }
  if (typeof spec !== 'object' || spec === null) return null;
  return { scope: r.scope as BudgetScope, id: r.scope_id, spec: spec as BudgetSpec, updatedBy: r.updated_by, updatedAt: new Date(r.updated_at) };
}

/** Operators' budget overrides over one SQLite handle. */
export function budgetRepo(db: Database): Storage['budgets'] {
  const list = db.prepare<[], BudgetOverrideRow>('SELECT scope, scope_id, spec, updated_by, updated_at FROM budget_overrides ORDER BY scope, scope_id');
  const upsert = db.prepare<[BudgetOverrideRow]>(
    `INSERT INTO budget_overrides (scope, scope_id, spec, updated_by, updated_at) VALUES (@scope, @scope_id, @spec, @updated_by, @updated_at)
     ON CONFLICT (scope, scope_id) DO UPDATE SET spec = excluded.spec, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
  );
  const remove = db.prepare<[string, string]>('DELETE FROM budget_overrides WHERE scope = ? AND scope_id = ?');
  return {
    async list() {
      return list.all().flatMap((r) => toBudgetOverride(r) ?? []);
    },
    async set(scope, id, spec, by) {
      if (spec === null) remove.run(scope, id);
      else upsert.run({ scope, scope_id: id, spec: JSON.stringify(spec), updated_by: by, updated_at: Date.now() });
    },
  };
}
