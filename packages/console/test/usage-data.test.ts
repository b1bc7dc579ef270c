import { describe, expect, it } from 'vitest';
import { alignDays, chartData, dailyLimit, dayRange, figureOf, lastDays, tokensOf } from '../src/usage-data';

describe('usage data for charts', () => {
  it('counts tokens as budgets do', () => {
    expect(tokensOf({ inputTokens: 1, outputTokens: 2, cacheReadInputTokens: 3, cacheCreationInputTokens: 4 })).toBe(10);
    expect(figureOf({ costUsd: 0.5, inputTokens: 9 }, 'usd')).toBe(0.5);
  });

  it('lays out days, filling days without calls with 0', () => {
    expect(dayRange('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(dayRange('2026-03-02', '2026-03-01')).toEqual([]);
    expect(dayRange('bad', '2026-03-01')).toEqual([]);
    expect(lastDays(new Date('2026-03-01T10:00:00Z'), 3)).toEqual({ from: '2026-02-27', to: '2026-03-01', days: ['2026-02-27', '2026-02-28', '2026-03-01'] });
    const days = ['2026-03-01', '2026-03-02', '2026-03-03'];
    expect(alignDays(days, [{ day: '2026-03-02', costUsd: 1.5 }], 'usd')).toEqual([0, 1.5, 0]);
    expect(chartData(days, [{ values: [1, 2, 3] }])).toEqual([
      [1772323200, 1772409600, 1772496000],
      [1, 2, 3],
    ]);
  });

  it('picks the daily budget of the metric', () => {
    expect(dailyLimit({ day: { tokens: 1000, usd: 2 } }, 'usd')).toBe(2);
    expect(dailyLimit({ day: { tokens: 1000 } }, 'tokens')).toBe(1000);
    expect(dailyLimit({ month: { usd: 1 } }, 'usd')).toBeNull();
    expect(dailyLimit(undefined, 'usd')).toBeNull();
  });
});
