import type { BudgetPeriod } from './types.js';

/** A budget period: `[start, end)`, both instants. */
export interface PeriodWindow {
  start: Date;
  end: Date;
}

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall clock of `t` in `timeZone`. */
function wallClock(t: number, timeZone: string): WallClock {
  const parts = new Map<string, string>(
    formatter(timeZone)
      .formatToParts(new Date(t))
      .map((p) => [p.type, p.value]),
  );
  const num = (k: string) => Number(parts.get(k));
  return { year: num('year'), month: num('month'), day: num('day'), hour: num('hour'), minute: num('minute'), second: num('second') };
}

/** The zone's offset from UTC at instant `t`, in ms (wall clock − UTC). */
function offsetAt(t: number, timeZone: string): number {
  const w = wallClock(t, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(t / 1000) * 1000;
}

/**
 * The first instant of a local calendar date (its 00:00 in `timeZone`; where the zone skips
 * midnight, the first wall-clock time that exists that day). `month` is 1-based and may overflow
 * (13 = January of the next year), as `Date.UTC` allows.
 */
export function startOfLocalDay(year: number, month: number, day: number, timeZone: string): Date {
  const wall = Date.UTC(year, month - 1, day);
  // Two passes settle the offset for every instant except inside a transition.
  let t = wall - offsetAt(wall, timeZone);
  t = wall - offsetAt(t, timeZone);
  // Midnight skipped by a DST change: t lands on the previous day's late evening or in the gap —
  // step forward to the first instant whose local date is the wanted one.
  const want = new Date(wall).toISOString().slice(0, 10);
  const dateOf = (x: number) => {
    const w = wallClock(x, timeZone);
    return `${String(w.year).padStart(4, '0')}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
  };
  if (dateOf(t) < want) {
    while (dateOf(t) < want) t += 15 * 60_000;
    // Back to the exact first minute of the day within that quarter hour.
    while (dateOf(t - 60_000) === want) t -= 60_000;
  }
  return new Date(t);
}

/** The day or month that contains `now` in `timeZone`: from its local 00:00 to the next one. */
export function periodWindow(period: BudgetPeriod, now: Date, timeZone: string): PeriodWindow {
  const w = wallClock(now.getTime(), timeZone);
  if (period === 'day') {
    return { start: startOfLocalDay(w.year, w.month, w.day, timeZone), end: startOfLocalDay(w.year, w.month, w.day + 1, timeZone) };
  }
  return { start: startOfLocalDay(w.year, w.month, 1, timeZone), end: startOfLocalDay(w.year, w.month + 1, 1, timeZone) };
}

/** A reset moment as a person reads it: `2026-03-09 00:00 America/New_York`. */
export function describeInstant(t: Date, timeZone: string): string {
  const w = wallClock(t.getTime(), timeZone);
  const p2 = (n: number) => String(n).padStart(2, '0');
  return `${w.year}-${p2(w.month)}-${p2(w.day)} ${p2(w.hour)}:${p2(w.minute)} ${timeZone}`;
}
