import { describe, expect, it } from 'vitest';
import { describeInstant, periodWindow, startOfLocalDay } from '../../src/index.js';

const iso = (w: { start: Date; end: Date }) => [w.start.toISOString(), w.end.toISOString()];

describe('budget periods', () => {
  it('a day in UTC runs from 00:00 to the next 00:00; the last millisecond of a year belongs to its December', () => {
    const t = new Date('2026-12-31T23:59:59.999Z');
    expect(iso(periodWindow('day', t, 'UTC'))).toEqual(['2026-12-31T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(iso(periodWindow('month', t, 'UTC'))).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z']);
    expect(iso(periodWindow('day', new Date('2027-01-01T00:00:00.000Z'), 'UTC'))[0]).toBe('2027-01-01T00:00:00.000Z');
  });

  it('the spring-forward day in New York is 23 hours long and the fall-back day 25, each starting at local midnight', () => {
    const spring = periodWindow('day', new Date('2026-03-08T12:00:00Z'), 'America/New_York');
    expect(iso(spring)).toEqual(['2026-03-08T05:00:00.000Z', '2026-03-09T04:00:00.000Z']);
    expect(spring.end.getTime() - spring.start.getTime()).toBe(23 * 3_600_000);
    const fall = periodWindow('day', new Date('2026-11-01T12:00:00Z'), 'America/New_York');
    expect(iso(fall)).toEqual(['2026-11-01T04:00:00.000Z', '2026-11-02T05:00:00.000Z']);
    expect(fall.end.getTime() - fall.start.getTime()).toBe(25 * 3_600_000);
    // A month spanning the change: from EST midnight to EDT midnight.
    expect(iso(periodWindow('month', new Date('2026-03-20T12:00:00Z'), 'America/New_York'))).toEqual(['2026-03-01T05:00:00.000Z', '2026-04-01T04:00:00.000Z']);
  });

  it('an instant just before local midnight is still the old day (and month) in the budget time zone, not in UTC', () => {
    // 2026-01-31 23:59 in Kolkata (UTC+5:30) is 18:29 UTC; one minute later February starts there.
    const before = new Date('2026-01-31T18:29:59.999Z');
    const after = new Date('2026-01-31T18:30:00.000Z');
    expect(iso(periodWindow('month', before, 'Asia/Kolkata'))).toEqual(['2025-12-31T18:30:00.000Z', '2026-01-31T18:30:00.000Z']);
    expect(iso(periodWindow('month', after, 'Asia/Kolkata'))).toEqual(['2026-01-31T18:30:00.000Z', '2026-02-28T18:30:00.000Z']);
    expect(periodWindow('day', after, 'Asia/Kolkata').start.toISOString()).toBe('2026-01-31T18:30:00.000Z');
  });

  it('a day whose midnight the zone skips starts at its first existing minute (Santiago, DST at 00:00)', () => {
    const start = startOfLocalDay(2026, 9, 6, 'America/Santiago');
    expect(start.toISOString()).toBe('2026-09-06T04:00:00.000Z');
    expect(describeInstant(start, 'America/Santiago')).toBe('2026-09-06 01:00 America/Santiago');
    expect(periodWindow('day', new Date('2026-09-06T03:59:59Z'), 'America/Santiago').end.toISOString()).toBe('2026-09-06T04:00:00.000Z');
  });

  it('names a reset moment in the budget time zone', () => {
    expect(describeInstant(new Date('2026-03-09T04:00:00Z'), 'America/New_York')).toBe('2026-03-09 00:00 America/New_York');
    expect(describeInstant(new Date('2026-12-02T00:00:00Z'), 'UTC')).toBe('2026-12-02 00:00 UTC');
  });
});
