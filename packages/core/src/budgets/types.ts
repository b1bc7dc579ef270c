/**
 * Budgets (docs/budgets.md): limits on what model calls may spend, per day and per month, in
 * tokens (input + output + cache read + cache write) and/or USD; either one blocks.
 */

/** One period's limit: either field blocks once spent; absent fields do not limit. */
export interface BudgetLimit {
  tokens?: number;
  usd?: number;
}

/** A budget: a daily and/or a monthly limit. */
export interface BudgetSpec {
  day?: BudgetLimit;
  month?: BudgetLimit;
}

/** What a budget is set for. A role's budget is each of its principals' default (counted per principal). */
export type BudgetScope = 'gateway' | 'agent' | 'role' | 'principal';

/** The two budget periods; both start at 00:00 in the budget time zone. */
export type BudgetPeriod = 'day' | 'month';

/** The configured budgets, resolved (the gateway's `budgets` section). Maps: ids come from outside. */
export interface BudgetSettings {
  /** IANA time zone whose midnight starts days and months. */
  timezone: string;
  gateway?: BudgetSpec;
  agents: ReadonlyMap<string, BudgetSpec>;
  roles: ReadonlyMap<string, BudgetSpec>;
  principals: ReadonlyMap<string, BudgetSpec>;
}

/** An operator's stored override of one scope's budget (control API). `id` is `''` for the gateway. */
export interface BudgetOverride {
  scope: BudgetScope;
  id: string;
  spec: BudgetSpec;
  updatedBy: string;
  updatedAt: Date;
}

/** Spent tokens and USD in one period. */
export interface BudgetSpend {
  tokens: number;
  usd: number;
}

/** The effective budgets: configured values with operators' overrides applied (GET /api/v1/budgets). */
export interface EffectiveBudgets {
  gateway: BudgetSpec;
  agents: Record<string, BudgetSpec>;
  roles: Record<string, BudgetSpec>;
  principals: Record<string, BudgetSpec>;
}

/** A stored usage row as budgets count it (`Storage.usage.changes`). */
export interface UsageChange {
  /** The row's insertion sequence number. */
  seq: number;
  createdAt: Date;
  principalId: string | null;
  agentId: string;
  /** input + output + cache read + cache write. */
  tokens: number;
  usd: number;
}
