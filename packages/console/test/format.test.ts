import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetText, daySeconds, formatCount, formatDuration, formatRelative, formatTime, formatUsd, truncate, utcDay } from '../src/format';

describe('formatting', () => {
  it('counts', () => {
    expect(formatCount(1234)).toBe('1,234');
    expect(formatCount(12_345, true)).toBe('12.3k');
    expect(formatCount(2_000_000, true)).toBe('2M');
    expect(formatCount(1_500_000_000, true)).toBe('1.5B');
    expect(formatCount(999, true)).toBe('999');
    expect(formatCount(null)).toBe('—');
    expect(formatCount(Number.NaN)).toBe('—');
  });

  it('money', () => {
    expect(formatUsd(0)).toBe('$0');
    expect(formatUsd(0.0042)).toBe('$0.0042');
    expect(formatUsd(12.345)).toBe('$12.35');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(undefined)).toBe('—');
  });

  it('durations and times', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1200)).toBe('1.2 s');
    expect(formatDuration(185_000)).toBe('3 min 5 s');
    expect(formatDuration(7_200_000)).toBe('2 h');
    expect(formatDuration(-1)).toBe('—');
    expect(formatTime('2026-12-05T23:41:48.123Z')).toBe('2026-12-05 23:41:48 UTC');
    expect(formatTime('garbage')).toBe('—');
    const now = Date.parse('2026-12-05T12:00:00Z');
    expect(formatRelative('2026-12-05T11:59:55Z', now)).toBe('5 s ago');
    expect(formatRelative('2026-12-05T12:02:00Z', now)).toBe('in 2 min');
    expect(formatRelative('2026-12-05T12:00:00Z', now)).toBe('now');
  });

  it('truncate says how much was cut', () => {
    expect(truncate('abc', 5)).toBe('abc');
    expect(truncate('abcdefgh', 3)).toBe('abc… (5 more characters)');
  });

  it('UTC days', () => {
    const now = new Date('2026-03-01T05:00:00Z');
    expect(utcDay(now)).toBe('2026-03-01');
    expect(utcDay(now, 1)).toBe('2026-02-28');
    expect(daySeconds('2026-03-01')).toBe(Date.parse('2026-03-01T00:00:00Z') / 1000);
  });

  it('budget lines', () => {
    expect(budgetText(undefined)).toBe('—');
    expect(budgetText({})).toBe('—');
    expect(budgetText({ day: { tokens: 100_000, usd: 1 }, month: { usd: 20 } })).toBe('day 100k tokens / $1.00 · month $20.00');
  });

  it('never throws on any number (property)', () => {
    fc.assert(
      fc.property(fc.double(), (n) => {
        formatCount(n, true);
        formatUsd(n);
        formatDuration(n);
      }),
    );
  });
});
