import type { BudgetOverride, BudgetPeriod, BudgetScope, BudgetSettings, BudgetSpec, EffectiveBudgets } from './types.js';

/** Who a model call spends for: the person (if known), their role, the agent. */
export interface Spender {
  principalId: string | null;
  /** The principal's role (ignored without a principal). */
  role: string;
  agentId: string;
}

/**
 * One budget that applies to a call: `scope`/`id` say where it was set, `counts` whose spend it
 * limits (a role's budget counts the principal's own spend; the gateway's counts every call).
 */
export interface ApplicableBudget {
  scope: BudgetScope;
  id: string;
  spec: BudgetSpec;
  counts: { kind: 'principal'; principalId: string } | { kind: 'agent'; agentId: string } | { kind: 'gateway' };
}

/** An override's key: `<scope>:<id>`. */
export const overrideKey = (scope: BudgetScope, id: string): string => `${scope}:${id}`;

/** Whether a spec limits anything. */
export function limitsAnything(spec: BudgetSpec | undefined): spec is BudgetSpec {
  return !!spec && (!!spec.day || !!spec.month);
}

/**
 * A configured spec with an operator's override applied: the override wins per period (its `day`
 * replaces the configured `day`, its `month` the configured `month`); a period the override
 * leaves out keeps the configured limit.
 */
export function mergeSpec(configured: BudgetSpec | undefined, override: BudgetSpec | undefined): BudgetSpec | undefined {
  if (!override) return configured;
  const day = override.day ?? configured?.day;
  const month = override.month ?? configured?.month;
  return { ...(day ? { day } : {}), ...(month ? { month } : {}) };
}

/** The budgets in force: the configured ones with the stored overrides applied (see {@link mergeSpec}). */
export function effectiveBudgets(settings: BudgetSettings, overrides: ReadonlyMap<string, BudgetOverride>): EffectiveBudgets {
  const out: EffectiveBudgets = { gateway: {}, agents: {}, roles: {}, principals: {} };
  out.gateway = mergeSpec(settings.gateway, overrides.get(overrideKey('gateway', ''))?.spec) ?? {};
  const groups: Array<[Exclude<BudgetScope, 'gateway'>, ReadonlyMap<string, BudgetSpec>, Record<string, BudgetSpec>]> = [
    ['agent', settings.agents, out.agents],
    ['role', settings.roles, out.roles],
    ['principal', settings.principals, out.principals],
  ];
  for (const [scope, configured, target] of groups) {
    const ids = new Set<string>(configured.keys());
    for (const o of overrides.values()) if (o.scope === scope) ids.add(o.id);
    for (const id of [...ids].sort()) {
      const spec = mergeSpec(configured.get(id), overrides.get(overrideKey(scope, id))?.spec);
      if (spec) Object.defineProperty(target, id, { value: spec, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

const own = (record: Record<string, BudgetSpec>, id: string): BudgetSpec | undefined => (Object.hasOwn(record, id) ? record[id] : undefined);

/**
 * The budgets that apply to a spender, narrowest first: the person's (their principal's own
 * budget, else their role's default — never both), the agent's, the gateway's. A sender without
 * a principal has no person budget. Only budgets that limit something are listed.
 */
export function applicableBudgets(budgets: EffectiveBudgets, who: Spender): ApplicableBudget[] {
  const out: ApplicableBudget[] = [];
  if (who.principalId !== null) {
    const mine = own(budgets.principals, who.principalId);
    const counts = { kind: 'principal' as const, principalId: who.principalId };
    if (limitsAnything(mine)) out.push({ scope: 'principal', id: who.principalId, spec: mine, counts });
    else {
      const role = own(budgets.roles, who.role);
      if (limitsAnything(role)) out.push({ scope: 'role', id: who.role, spec: role, counts });
    }
  }
  const agent = own(budgets.agents, who.agentId);
  if (limitsAnything(agent)) out.push({ scope: 'agent', id: who.agentId, spec: agent, counts: { kind: 'agent', agentId: who.agentId } });
  if (limitsAnything(budgets.gateway)) out.push({ scope: 'gateway', id: '', spec: budgets.gateway, counts: { kind: 'gateway' } });
  return out;
}

/** Whether any budget is configured or overridden at all (none: no check runs). */
export function anyBudget(budgets: EffectiveBudgets): boolean {
  return (
    limitsAnything(budgets.gateway) ||
    [budgets.agents, budgets.roles, budgets.principals].some((group) => Object.values(group).some((spec) => limitsAnything(spec)))
  );
}

/** How a budget is named to a person: "your daily token budget (role member)". */
export function describeBudget(b: Pick<ApplicableBudget, 'scope' | 'id'>, period: BudgetPeriod, kind: 'tokens' | 'usd'): string {
  const what = `${period === 'day' ? 'daily' : 'monthly'} ${kind === 'tokens' ? 'token' : 'USD'} budget`;
  if (b.scope === 'principal') return `your ${what}`;
  if (b.scope === 'role') return `your ${what} (role ${b.id})`;
  if (b.scope === 'agent') return `the agent ${b.id}'s ${what}`;
  return `the gateway's ${what}`;
}
