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
