import { describeInstant } from './period.js';
import type { PersonalUsage } from './service.js';

/** One period of `/usage` in plain words (the role id is raw: the channel escapes it). */
export interface UsagePeriodLine {
  /** `Today` or `This month`. */
  name: string;
  /** `4,321 tokens`. */
  tokens: string;
  /** `$0.0123`. */
  usd: string;
  /** `budget 5,000 tokens / $20.00`, or `no budget`. */
  budget: string;
  /** The role whose budget applies (absent: the person's own budget, or none). */
  role?: string;
  /** When the period resets, in the budget time zone (`2026-12-02 00:00 Europe/Berlin`). */
  resets: string;
}

/** `/usage` in plain words, for a channel to lay out and mark up. */
export interface UsageLines {
  title: 'Your usage';
  periods: UsagePeriodLine[];
}

const tokens = (n: number): string => `${n.toLocaleString('en-US')} tokens`;

/** The words of `/usage` every chat shows: per period the spent tokens and USD, the budget that applies (and whose), when it resets. */
export function usageLines(u: PersonalUsage): UsageLines {
  return {
    title: 'Your usage',
    periods: u.periods.map((p): UsagePeriodLine => {
      const limit = [p.limit?.tokens !== undefined ? tokens(p.limit.tokens) : null, p.limit?.usd !== undefined ? `$${p.limit.usd.toFixed(2)}` : null]
        .filter(Boolean)
        .join(' / ');
      return {
        name: p.period === 'day' ? 'Today' : 'This month',
        tokens: tokens(p.tokens),
        usd: `$${p.usd.toFixed(4)}`,
        budget: limit ? `budget ${limit}` : 'no budget',
        ...(limit && p.limit?.scope === 'role' ? { role: p.limit.id } : {}),
        resets: describeInstant(new Date(p.resetsAt), u.timezone),
      };
    }),
  };
}
