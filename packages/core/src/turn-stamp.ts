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
 * The last stamp of each zone is kept for its minute: every turn that starts within the same
 * minute gets it without formatting again.
 */
export function turnStamp(at: Date, timeZone: string): string {
  const zone = zoneOf(timeZone);
  const ms = at.getTime();
  // Since 1972 every zone's UTC offset is a whole number of minutes (Africa/Monrovia's −0:44:30 was
  // the last exception), so one UTC minute is one local minute; earlier instants are not cached.
  const minute = ms >= WHOLE_MINUTE_OFFSETS_SINCE ? Math.floor(ms / 60_000) : Number.NaN;
  if (zone.minute === minute && zone.text !== undefined) return zone.text;
  const parts = new Map(zone.formatter.formatToParts(at).map((p) => [p.type, p.value]));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.get(type) ?? '';
  const text = `Current time: ${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${timeZone} (${part('weekday')})`;
  zone.minute = minute;
  zone.text = text;
  return text;
}

/** 1972-01-01T00:00:00Z in milliseconds. */
const WHOLE_MINUTE_OFFSETS_SINCE = Date.UTC(1972, 0, 1);

/** A zone's formatter (building one costs more than formatting; zones come from the config, so few) and its last stamp. */
interface Zone {
  formatter: Intl.DateTimeFormat;
  /** The UTC minute (`ms / 60000`) of `text`; NaN when nothing is kept. */
  minute: number;
  text: string | undefined;
}

const zones = new Map<string, Zone>();

function zoneOf(timeZone: string): Zone {
  let zone = zones.get(timeZone);
  if (!zone) {
    const formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      weekday: 'long',
      hourCycle: 'h23',
    });
    zone = { formatter, minute: Number.NaN, text: undefined };
    zones.set(timeZone, zone);
  }
  return zone;
}
