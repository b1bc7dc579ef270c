import { describe, expect, it } from 'vitest';
import { isTimeZone, turnStamp } from '../src/turn-stamp.js';

describe('turnStamp', () => {
  const at = new Date('2026-12-01T21:23:45.678Z');

  it('writes the minute, the zone and the weekday in UTC', () => {
    expect(turnStamp(at, 'UTC')).toBe('Current time: 2026-12-01 21:23 UTC (Tuesday)');
  });

  it('converts to the zone, across midnight and with daylight saving time', () => {
    expect(turnStamp(at, 'Asia/Tokyo')).toBe('Current time: 2026-12-02 06:23 Asia/Tokyo (Wednesday)');
    expect(turnStamp(at, 'America/Los_Angeles')).toBe('Current time: 2026-12-01 13:23 America/Los_Angeles (Tuesday)');
    expect(turnStamp(new Date('2026-07-01T00:05:00Z'), 'Europe/Berlin')).toBe('Current time: 2026-07-01 02:05 Europe/Berlin (Wednesday)');
  });

  it('keeps a stamp for its minute only: the next minute, another zone or an instant before 1972 is formatted anew', () => {
    expect(turnStamp(new Date('2026-12-01T21:23:00.000Z'), 'UTC')).toBe('Current time: 2026-12-01 21:23 UTC (Tuesday)');
    expect(turnStamp(new Date('2026-12-01T21:23:59.999Z'), 'UTC')).toBe('Current time: 2026-12-01 21:23 UTC (Tuesday)');
    expect(turnStamp(new Date('2026-12-01T21:24:00.000Z'), 'UTC')).toBe('Current time: 2026-12-01 21:24 UTC (Tuesday)');
    expect(turnStamp(new Date('2026-12-01T21:24:00.000Z'), 'Asia/Kolkata')).toBe('Current time: 2026-12-02 02:54 Asia/Kolkata (Wednesday)');
    expect(turnStamp(new Date('2026-12-01T21:23:30.000Z'), 'UTC')).toBe('Current time: 2026-12-01 21:23 UTC (Tuesday)');
    // Monrovia was UTC−0:44:30 until 1972: 12:00:20Z is 11:15:50 local, 12:00:40Z is 11:16:10.
    expect(turnStamp(new Date('1960-06-01T12:00:20Z'), 'Africa/Monrovia')).toBe('Current time: 1960-06-01 11:15 Africa/Monrovia (Wednesday)');
    expect(turnStamp(new Date('1960-06-01T12:00:40Z'), 'Africa/Monrovia')).toBe('Current time: 1960-06-01 11:16 Africa/Monrovia (Wednesday)');
  });

  it('writes midnight as 00, never 24', () => {
    expect(turnStamp(new Date('2026-12-01T00:00:00Z'), 'UTC')).toBe('Current time: 2026-12-01 00:00 UTC (Tuesday)');
  });
});

describe('isTimeZone', () => {
  it('accepts IANA zones and refuses anything else', () => {
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isTimeZone('')).toBe(false);
    expect(isTimeZone('not a zone')).toBe(false);
  });
});
