/** Usage figures arranged for charts: one value per UTC day, per group (person, agent, model). */
import { daySeconds, utcDay } from './format';
import type { BudgetLimits, UsageFigures } from './types';

export type Metric = 'tokens' | 'usd';

/** Tokens as budgets count them: input + output + cache read + cache write. */
export function tokensOf(f: Partial<UsageFigures>): number {
  return (f.inputTokens ?? 0) + (f.outputTokens ?? 0) + (f.cacheReadInputTokens ?? 0) + (f.cacheCreationInputTokens ?? 0);
}

/** The figure of a metric. */
export function figureOf(f: Partial<UsageFigures>, metric: Metric): number {
  return metric === 'usd' ? (f.costUsd ?? 0) : tokensOf(f);
}

/** Every UTC day from `from` to `to`, both included (at most 400). */
export function dayRange(from: string, to: string): string[] {
  const out: string[] = [];
  let t = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (Number.isNaN(t) || Number.isNaN(end)) return out;
  while (t <= end && out.length < 400) {
    out.push(new Date(t).toISOString().slice(0, 10));
    t += 86_400_000;
  }
  return out;
}

/** The last `n` UTC days up to `now`, oldest first. */
export function lastDays(now: Date, n: number): { from: string; to: string; days: string[] } {
  const from = utcDay(now, n - 1);
  const to = utcDay(now);
  return { from, to, days: dayRange(from, to) };
}

/** One value per day of `days` from an answer's `days` (0 for a day without calls). */
export function alignDays(days: readonly string[], answer: ReadonlyArray<Partial<UsageFigures> & { day: string }>, metric: Metric): number[] {
  const byDay = new Map(answer.map((d) => [d.day, figureOf(d, metric)]));
  return days.map((d) => byDay.get(d) ?? 0);
}

/** The daily limit of a budget for a metric, or null. */
export function dailyLimit(b: BudgetLimits | undefined, metric: Metric): number | null {
  const v = metric === 'usd' ? b?.day?.usd : b?.day?.tokens;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** uPlot's data: x (seconds) then one array per series. */
export function chartData(days: readonly string[], series: ReadonlyArray<{ values: number[] }>): number[][] {
  return [days.map(daySeconds), ...series.map((s) => s.values)];
}
