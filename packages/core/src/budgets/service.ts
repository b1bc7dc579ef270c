import type { Logger } from 'pino';
import type { Storage } from '../storage.js';
import type { NewUsageRecord } from '../usage.js';
import { anyBudget, applicableBudgets, type ApplicableBudget, effectiveBudgets, overrideKey, type Spender } from './limits.js';
import { periodWindow, type PeriodWindow } from './period.js';
import { SpendTracker } from './spend-tracker.js';
import type { BudgetOverride, BudgetPeriod, BudgetScope, BudgetSettings, BudgetSpec, BudgetSpend, EffectiveBudgets } from './types.js';

/** One limit of one applicable budget with what was spent against it. */
export interface BudgetStanding {
  budget: ApplicableBudget;
  period: BudgetPeriod;
  kind: 'tokens' | 'usd';
  limit: number;
  spent: number;
  window: PeriodWindow;
}

/** A period of a person's own spend (`/usage`): what they spent and the limit that applies, if any. */
export interface PersonalPeriodUsage {
  period: BudgetPeriod;
  tokens: number;
  usd: number;
  /** When the period ends (the next local 00:00), ISO. */
  resetsAt: string;
  /** The person's budget for the period: their own or their role's. */
  limit?: { scope: 'principal' | 'role'; id: string; tokens?: number; usd?: number };
}

/** What `/usage` shows: the person's spend today and this month in the budget time zone. */
export interface PersonalUsage {
  timezone: string;
  periods: PersonalPeriodUsage[];
}

export interface BudgetServiceOptions {
  settings: BudgetSettings;
  storage: Pick<Storage, 'usage' | 'budgets'>;
  log: Logger;
  /** The clock (default: the system clock). */
  now?: () => Date;
}

/** A usage row's tokens as budgets count them: input + output + cache read + cache write. */
export const tokensOf = (r: Pick<NewUsageRecord, 'inputTokens' | 'outputTokens' | 'cacheReadInputTokens' | 'cacheCreationInputTokens'>): number =>
  r.inputTokens + r.outputTokens + r.cacheReadInputTokens + r.cacheCreationInputTokens;

const PERIODS: readonly BudgetPeriod[] = ['day', 'month'];

/**
 * The budgets in force (configured, with operators' stored overrides applied) and what has been
 * spent against them: the stored usage rows of the current local day and month (running sums,
 * see {@link SpendTracker}) plus the calls a turn has not stored yet.
 */
export class BudgetService {
  private overrides = new Map<string, BudgetOverride>();
  private effectiveCache: EffectiveBudgets;
  private activeCache: boolean;
  private readonly tracker: SpendTracker;
  private windowCache: Record<BudgetPeriod, PeriodWindow> | null = null;

  constructor(private readonly options: BudgetServiceOptions) {
    this.tracker = new SpendTracker(options.storage.usage);
    this.effectiveCache = effectiveBudgets(options.settings, this.overrides);
    this.activeCache = anyBudget(this.effectiveCache);
  }

  /** Loads the stored overrides (call once before use). */
  async load(): Promise<void> {
    this.overrides = new Map((await this.options.storage.budgets.list()).map((o) => [overrideKey(o.scope, o.id), o]));
    this.refresh();
  }

  /** The budget time zone. */
  get timezone(): string {
    return this.options.settings.timezone;
  }

  /** Whether any budget is configured or overridden: without one no check runs. */
  get active(): boolean {
    return this.activeCache;
  }

  /** The budgets in force. */
  effective(): EffectiveBudgets {
    return this.effectiveCache;
  }

  /** Stores an operator's override of one scope's budget (`spec` null or empty: back to the configured budget). */
  async set(scope: BudgetScope, id: string, spec: BudgetSpec | null, by: string): Promise<EffectiveBudgets> {
    const empty = !spec || (!spec.day && !spec.month);
    await this.options.storage.budgets.set(scope, id, empty ? null : spec, by);
    const key = overrideKey(scope, id);
    if (empty) this.overrides.delete(key);
    else this.overrides.set(key, { scope, id, spec, updatedBy: by, updatedAt: new Date() });
    this.refresh();
    return this.effectiveCache;
  }

  private refresh(): void {
    this.effectiveCache = effectiveBudgets(this.options.settings, this.overrides);
    this.activeCache = anyBudget(this.effectiveCache);
  }

  /** The service's clock (periods and warnings follow it). */
  now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** The running turn's calls not stored yet, summed. */
  private static pendingSpend(pending: readonly NewUsageRecord[]): BudgetSpend {
    const extra: BudgetSpend = { tokens: 0, usd: 0 };
    for (const r of pending) {
      extra.tokens += tokensOf(r);
      extra.usd += r.costUsd;
    }
    return extra;
  }

  /** The current day and month (computed again only once the day ends, or the clock goes back). */
  private windows(): Record<BudgetPeriod, PeriodWindow> {
    const now = this.now();
    const t = now.getTime();
    const cached = this.windowCache;
    if (cached && t >= cached.day.start.getTime() && t < cached.day.end.getTime()) return cached;
    this.windowCache = { day: periodWindow('day', now, this.timezone), month: periodWindow('month', now, this.timezone) };
    return this.windowCache;
  }

  /**
   * Every limit that applies to `who`, with what was spent against it. `pending` are the running
   * turn's calls not stored yet (all of them `who`'s). Empty without budgets.
   */
  async standings(who: Spender, pending: readonly NewUsageRecord[] = []): Promise<BudgetStanding[]> {
    if (!this.activeCache) return [];
    const budgets = applicableBudgets(this.effectiveCache, who);
    if (budgets.length === 0) return [];
    const windows = this.windows();
    // All pending calls are `who`'s: they count in every budget that applies.
    const extra = BudgetService.pendingSpend(pending);
    const stored = await this.tracker.spend(
      budgets.map((b) => b.counts),
      windows,
    );
    const out: BudgetStanding[] = [];
    for (const [i, budget] of budgets.entries()) {
      const spend = { day: plus(stored[i]!.day, extra), month: plus(stored[i]!.month, extra) };
      for (const period of PERIODS) {
        const limit = budget.spec[period];
        if (!limit) continue;
        if (limit.tokens !== undefined) out.push({ budget, period, kind: 'tokens', limit: limit.tokens, spent: spend[period].tokens, window: windows[period] });
        if (limit.usd !== undefined) out.push({ budget, period, kind: 'usd', limit: limit.usd, spent: spend[period].usd, window: windows[period] });
      }
    }
    return out;
  }

  /** A person's own spend today and this month, with their budget for each (`/usage`). */
  async personal(principalId: string, role: string): Promise<PersonalUsage> {
    const windows = this.windows();
    const spend = await this.options.storage.usage.spend({ principalId }, { day: windows.day.start, month: windows.month.start });
    const person = applicableBudgets(this.effectiveCache, { principalId, role, agentId: '\u0000' }).find((b) => b.scope === 'principal' || b.scope === 'role');
    const periods = PERIODS.map((period): PersonalPeriodUsage => {
      const limit = person?.spec[period];
      return {
        period,
        tokens: spend[period].tokens,
        usd: roundUsd(spend[period].usd),
        resetsAt: windows[period].end.toISOString(),
        ...(person && limit ? { limit: { scope: person.scope as 'principal' | 'role', id: person.id, ...limit } } : {}),
      };
    });
    return { timezone: this.timezone, periods };
  }
}

const roundUsd = (usd: number): number => Math.round(usd * 1e9) / 1e9;

const plus = (a: BudgetSpend, b: BudgetSpend): BudgetSpend => ({ tokens: a.tokens + b.tokens, usd: a.usd + b.usd });
