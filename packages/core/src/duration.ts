import { z } from 'zod';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses `250ms`, `5s`, `2m`, `1h` (or a bare number of milliseconds) into milliseconds. */
export function parseDuration(v: string | number): number | null {
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? v : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(v);
  if (!m) return null;
  return Math.round(Number(m[1]) * UNITS[m[2]!]!);
}

/** A zod schema for a duration; the parsed value is milliseconds. */
export const duration = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const ms = parseDuration(v);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: 'expected a duration such as "500ms", "5s", "2m" or a number of milliseconds' });
    return z.NEVER;
  }
  return ms;
});
