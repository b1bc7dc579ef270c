// The table rows of a long-session result (bench/lib/long-session.mjs), for `npm run bench` and
// `node bench/long-session.mjs`.
import { round } from './stats.mjs';

/** Targets of the long-session figures (issue 13, item 6). */
export const LONG_TARGETS = { maxRequestShare: 0.6, cpuGrowth: 1.5, cacheReadShare: 0.7, failedTurns: 0, wallSec: 90 };

/**
 * The table rows of a long-session result, in `npm run bench`'s row shape (metric, unit, gateway,
 * baseline, ratio, target, better, ok); `ok` is null where there is no target or no figure.
 */
export function longSessionRows(r) {
  const rows = [];
  const w = r.window >= 1000 ? `${Math.round(r.window / 1000)}k` : String(r.window);
  const p = `long session (${w} window)`;
  const row = (metric, unit, value, target = null, better = 'lower') => {
    const ok = target === null || typeof value !== 'number' ? null : better === 'lower' ? value <= target : value >= target;
    rows.push({
      metric: `${p}: ${metric}`,
      unit,
      gateway: typeof value === 'number' ? round(value, 3) : (value ?? null),
      baseline: null,
      ratio: null,
      target,
      better,
      ok,
    });
  };
  row(`turns done of ${r.turnsPlanned}${r.truncated ? ' (TRUNCATED by the time budget)' : ''}`, 'turns', r.turnsDone, r.turnsPlanned, 'higher');
  row(
    `failed turns + wrong answers${r.firstFailedTurn ? ` (first failure: turn ${r.firstFailedTurn})` : ''}`,
    'turns',
    r.failed + r.wrongAnswers,
    LONG_TARGETS.failedTurns,
  );
  for (const s of r.sizes) {
    row(`request at turn ${s.turn} (fake's count)`, 'tokens', s.tokens);
    row(`request at turn ${s.turn}`, 'bytes', s.bytes);
  }
  row('largest request / context window', 'ratio', r.largestRequestShare, LONG_TARGETS.maxRequestShare);
  row(`server CPU per turn, ${r.cpuWindows.early}`, 'ms', r.cpuMsPerTurnEarly);
  row(`server CPU per turn, ${r.cpuWindows.late}`, 'ms', r.cpuMsPerTurnLate);
  // A window with failed turns (one cheap refused call each) is not comparable: never a pass.
  const failedIn = r.cpuWindowFailures.early + r.cpuWindowFailures.late;
  row(
    `server CPU per turn, last / early window${failedIn ? ` (${failedIn} failed turns in them: not comparable)` : ''}`,
    'ratio',
    r.cpuGrowth,
    LONG_TARGETS.cpuGrowth,
  );
  if (failedIn) rows.at(-1).ok = false;
  row('compactions (compact entries, control API)', 'count', r.compactEntries ?? 'n/a');
  row('microcompact markers (control API)', 'count', r.microcompactEntries ?? 'n/a');
  row('summary calls at the fake', 'count', r.summaryCalls);
  row('requests refused prompt_too_long by the fake', 'count', r.refusedRequests);
  row('cache reads / all input tokens', 'ratio', r.cacheReadShare ?? 0, LONG_TARGETS.cacheReadShare, 'higher');
  row('wall time of the measured turns', 's', r.loadWallMs / 1000, LONG_TARGETS.wallSec);
  return rows;
}
