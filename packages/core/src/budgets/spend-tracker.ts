import type { Storage } from '../storage.js';
import type { ApplicableBudget } from './limits.js';
import type { PeriodWindow } from './period.js';
import type { BudgetPeriod, BudgetSpend, UsageChange } from './types.js';

type Counts = ApplicableBudget['counts'];
type PeriodSpend = Record<BudgetPeriod, BudgetSpend>;

const keyOf = (c: Counts): string => (c.kind === 'principal' ? `p\u0000${c.principalId}` : c.kind === 'agent' ? `a\u0000${c.agentId}` : 'g');

const PAGE = 10_000;

/**
 * Running sums of the stored usage rows per budget subject (a principal, an agent, everyone) in
 * the current day and month, so a budget check costs one primary-key range read of the rows
 * stored since the last check (`usage.changes`) instead of a sum over the whole month. A subject
 * is seeded once per period by an indexed sum through the sequence number the sums have reached;
 * later rows are added as they appear, whoever stored them. Checks run one at a time.
 */
export class SpendTracker {
  private seq: number | null = null;
  private windows: { day: number; month: number } | null = null;
  private readonly sums = new Map<string, PeriodSpend>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly usage: Pick<Storage['usage'], 'spend' | 'changes'>) {}

  /** What each of `subjects` spent in the day and month of `windows` (stored rows only), in order. */
  spend(subjects: readonly Counts[], windows: Record<BudgetPeriod, PeriodWindow>): Promise<PeriodSpend[]> {
    const run = this.queue.then(() => this.spendNow(subjects, windows));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async spendNow(subjects: readonly Counts[], windows: Record<BudgetPeriod, PeriodWindow>): Promise<PeriodSpend[]> {
    const day = windows.day.start.getTime();
    const month = windows.month.start.getTime();
    if (!this.windows || this.windows.day !== day || this.windows.month !== month) {
      // A new day or month: every sum starts over (seeded again on first use).
      this.sums.clear();
      this.windows = { day, month };
    }
    await this.catchUp();
    const out: PeriodSpend[] = [];
    for (const counts of subjects) {
      const key = keyOf(counts);
      let sum = this.sums.get(key);
      if (!sum) {
        const filter = counts.kind === 'principal' ? { principalId: counts.principalId } : counts.kind === 'agent' ? { agentId: counts.agentId } : {};
        sum = await this.usage.spend(filter, { day: windows.day.start, month: windows.month.start }, this.seq ?? 0);
        this.sums.set(key, sum);
      }
      out.push({ day: { ...sum.day }, month: { ...sum.month } });
    }
    return out;
  }

  /** Adds the rows stored since the last check to the sums they count in. */
  private async catchUp(): Promise<void> {
    if (this.seq === null) {
      this.seq = (await this.usage.changes(null)).last;
      return;
    }
    for (;;) {
      const { rows, last } = await this.usage.changes(this.seq, PAGE);
      for (const r of rows) this.apply(r);
      this.seq = last;
      if (rows.length < PAGE) return;
    }
  }

  private apply(r: UsageChange): void {
    if (!this.windows) return;
    const at = r.createdAt.getTime();
    if (at < this.windows.month) return;
    const keys = [keyOf({ kind: 'agent', agentId: r.agentId }), 'g'];
    if (r.principalId !== null) keys.push(keyOf({ kind: 'principal', principalId: r.principalId }));
    for (const key of keys) {
      const sum = this.sums.get(key);
      if (!sum) continue;
      sum.month.tokens += r.tokens;
      sum.month.usd += r.usd;
      if (at >= this.windows.day) {
        sum.day.tokens += r.tokens;
        sum.day.usd += r.usd;
      }
    }
  }
}
