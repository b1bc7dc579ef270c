import type { BeforeCall, QueryResult } from '@switchboard/agent';
import type { Logger } from 'pino';
import type { Storage } from '../storage.js';
import type { NewUsageRecord } from '../usage.js';
import { describeBudget } from './limits.js';
import { describeInstant } from './period.js';
import type { BudgetService, BudgetStanding } from './service.js';

/** Share of a limit at which the person is warned, once per limit and period. */
export const WARN_AT = 0.8;

/** What the `BudgetExceeded` hook event carries besides the turn's ids. */
export interface BudgetExceededDetail {
  scope: string;
  /** The scope's id (`''` for the gateway). */
  id: string;
  principalId: string | null;
  period: 'day' | 'month';
  kind: 'tokens' | 'usd';
  limit: number;
  spent: number;
  /** When the period ends, ISO. */
  resetsAt: string;
  /** Whether the refusal came before the turn's first model call (else mid-turn, after one). */
  atStart: boolean;
}

/** One turn as the budget check sees it. */
export interface BudgetTurn {
  turnId: string;
  sessionId: string;
  agentId: string;
  principalId: string | null;
  /** The turn's completed calls not stored yet (`TurnJournal.pendingCalls`). */
  pendingCalls(): readonly NewUsageRecord[];
  /** Tells the person something in chat (must not throw). */
  notify(text: string): Promise<void>;
  log: Logger;
}

export interface BudgetGateOptions {
  budgets: BudgetService;
  audit: Pick<Storage['audit'], 'append'>;
  /** Where a principal's role is read (once per turn). */
  principals: Pick<Storage['principals'], 'get'>;
  /** Runs the `BudgetExceeded` hooks (must not throw). */
  onExceeded?(turn: { sessionId: string; turnId: string; agentId: string }, detail: BudgetExceededDetail): Promise<void>;
}

const amount = (kind: 'tokens' | 'usd', n: number): string => (kind === 'tokens' ? `${Math.round(n).toLocaleString('en-US')} tokens` : `$${n.toFixed(2)}`);

/** The reply to a person whose turn a budget refused (`atStart`) or stopped after a call. */
export function exceededText(s: BudgetStanding, timezone: string, atStart: boolean): string {
  const what = describeBudget(s.budget, s.period, s.kind);
  const resets = describeInstant(s.window.end, timezone);
  const head = atStart ? 'Your message was not answered' : 'The answer stopped here';
  return `${head}: ${what} of ${amount(s.kind, s.limit)} is used up (${amount(s.kind, s.spent)} spent). It resets at ${resets}.`;
}

/** The one-time warning at {@link WARN_AT} of a limit. */
export function warningText(s: BudgetStanding, timezone: string): string {
  const pct = Math.floor((s.spent / s.limit) * 100);
  return `Heads-up: ${pct}% of ${describeBudget(s.budget, s.period, s.kind)} (${amount(s.kind, s.limit)}) is used. It resets at ${describeInstant(s.window.end, timezone)}.`;
}

const standingKey = (s: BudgetStanding): string =>
  [s.budget.scope, s.budget.id, s.budget.counts.kind === 'principal' ? s.budget.counts.principalId : '', s.period, s.kind, s.window.start.getTime()].join(
    '\u0000',
  );

/**
 * The budget check before each model call (the query loop's `beforeCall`). Over a limit: the turn
 * ends `budget_exceeded` with a reply naming the limit and its reset, an audit entry
 * (`budget.exceeded`), a `budget_exceeded` warn log and the `BudgetExceeded` hook event. At 80% of
 * a limit the person is told once per limit and period; which warnings were sent is kept in
 * memory (a restart may warn once more).
 */
export class BudgetGate {
  /** Warned limits: key → the end of their period (ms), pruned once it passes. */
  private readonly warned = new Map<string, number>();

  constructor(private readonly options: BudgetGateOptions) {}

  /** The turn's check; undefined when no budget is configured (then nothing runs per call). */
  async forTurn(turn: BudgetTurn): Promise<BeforeCall | undefined> {
    if (!this.options.budgets.active) return undefined;
    const role = await this.roleOf(turn);
    return async (info) => {
      try {
        return await this.check(turn, role, info.call === 0);
      } catch (err) {
        // A failed check must not stop the turn silently: it is logged and the call goes on.
        turn.log.error({ err }, 'budget check failed; the call goes on');
        return null;
      }
    };
  }

  /** The turn's principal's role; `guest` without a principal (or when it cannot be read: logged). */
  private async roleOf(turn: BudgetTurn): Promise<string> {
    if (!turn.principalId) return 'guest';
    try {
      return (await this.options.principals.get(turn.principalId))?.role ?? 'guest';
    } catch (err) {
      turn.log.error({ err }, "could not read the principal's role for its budget; the guest role's applies");
      return 'guest';
    }
  }

  private async check(turn: BudgetTurn, role: string, atStart: boolean): Promise<QueryResult | null> {
    const { budgets } = this.options;
    const standings = await budgets.standings({ principalId: turn.principalId, role, agentId: turn.agentId }, turn.pendingCalls());
    const over = standings.find((s) => s.spent >= s.limit);
    if (over) return this.refuse(turn, over, atStart);
    const now = budgets.now().getTime();
    for (const [key, end] of this.warned) if (end <= now) this.warned.delete(key);
    for (const s of standings) {
      if (s.spent < s.limit * WARN_AT) continue;
      const key = standingKey(s);
      if (this.warned.has(key)) continue;
      this.warned.set(key, s.window.end.getTime());
      await turn.notify(warningText(s, budgets.timezone));
    }
    return null;
  }

  private async refuse(turn: BudgetTurn, s: BudgetStanding, atStart: boolean): Promise<QueryResult> {
    const detail: BudgetExceededDetail = {
      scope: s.budget.scope,
      id: s.budget.id,
      principalId: turn.principalId,
      period: s.period,
      kind: s.kind,
      limit: s.limit,
      spent: s.spent,
      resetsAt: s.window.end.toISOString(),
      atStart,
    };
    turn.log.warn({ event: 'budget_exceeded', ...detail }, `budget_exceeded: ${s.budget.scope} ${s.period} ${s.kind} limit reached`);
    await this.options.audit
      .append({ actor: 'gateway', action: 'budget.exceeded', target: turn.turnId, detail: { ...detail, sessionId: turn.sessionId, agentId: turn.agentId } })
      .catch((err: unknown) => turn.log.error({ err }, 'could not audit a budget refusal'));
    await this.options.onExceeded?.({ sessionId: turn.sessionId, turnId: turn.turnId, agentId: turn.agentId }, detail).catch((err: unknown) => {
      turn.log.error({ err }, 'BudgetExceeded hooks failed');
    });
    return { reason: 'budget_exceeded', error: exceededText(s, this.options.budgets.timezone, atStart) };
  }
}
