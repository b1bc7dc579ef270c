/**
 * The date and time a turn started, as the model reads it: one text block stamped into the
 * person's user entry when the turn starts (before the person's text) and stored with it, so a
 * resumed turn and every later request send the same bytes and the cached prefix never moves.
 */

/** Whether `zone` is an IANA time zone this runtime knows (`UTC`, `Europe/Berlin`, …). */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * `Current time: 2026-12-01 21:23 UTC (Tuesday)` — the minute, the zone's name and the weekday of
 * `at` in `timeZone` (an IANA zone; check it with {@link isTimeZone} first: an unknown one throws).
 */
export function turnStamp(at: Date, timeZone: string): string {
  const parts = new Map(
    formatterFor(timeZone)
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.get(type) ?? '';
  return `Current time: ${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${timeZone} (${part('weekday')})`;
}

/** One formatter per zone (building one costs more than formatting; zones come from the config, so few). */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      weekday: 'long',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}
