import * as tk from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { longSessionRows } from '../bench/lib/long-session-rows.mjs';
import { runLongSession } from '../bench/lib/long-session.mjs';

interface Row {
  metric: string;
  unit: string;
  gateway: number | string | null;
  target: number | null;
  ok: boolean | null;
}

// The bench's long-session load, small: 24 turns on a 20k-token window, through the real gateway
// process and the fake. Without context management the session outgrew the window near turn 16
// and every later turn was refused; with microcompact and compaction none is. The load must finish
// every turn, count what failed and report the figures (`npm run bench` prints them).
describe('bench: the long-session load', () => {
  it('runs every turn through read_file, survives prompt_too_long and reports sizes, CPU, compactions and the cache share', async () => {
    const r = await runLongSession(tk, { turns: 24, window: 20_000, warmupTurns: 10 });

    expect(r.turnsDone).toBe(24);
    expect(r.truncated).toBe(false);
    const ok = r.perTurn.filter((t: { ok: boolean }) => t.ok).length;
    expect(ok + r.failed).toBe(24);
    expect(r.wrongAnswers).toBe(0);
    // The only way a turn may fail here is the window; each failed turn had a request the fake refused.
    for (const code of Object.keys(r.failures)) expect(code).toBe('prompt_too_long');
    expect(r.refusedRequests).toBeGreaterThanOrEqual(r.failed);
    // An answered turn is two model calls: the read_file call and the answer after its result.
    for (const t of r.perTurn.filter((x: { ok: boolean; summaries: number }) => x.ok && x.summaries === 0)) expect(t.calls).toBeGreaterThanOrEqual(2);

    // Context management keeps every request inside the window: no turn fails, and the shapers acted
    // (ten turns of 4 KB results, over 10k tokens, would fill half the window by turn 10).
    expect(r.failed).toBe(0);
    expect(r.refusedRequests).toBe(0);
    expect(r.compactEntries + r.microcompactEntries).toBeGreaterThan(0);
    const at10 = r.sizes.find((s: { turn: number }) => s.turn === 10);
    expect(at10.tokens).toBeGreaterThan(0);
    expect(at10.bytes).toBeGreaterThan(at10.tokens * 3);
    expect(r.largestRequestShare).toBeCloseTo(r.largestRequestTokens / 20_000, 3);
    expect(r.largestRequestShare).toBeLessThan(1);

    expect(r.cpuMsPerTurnEarly).toBeGreaterThan(0);
    expect(r.cpuMsPerTurnLate).toBeGreaterThan(0);
    expect(r.transcriptError).toBeNull();
    // 24 turns on a 20k window need microcompact (a run shows ~8 entries; compaction itself is not reached).
    expect(r.microcompactEntries).toBeGreaterThan(0);
    expect(r.transcriptEntries).toBeGreaterThanOrEqual(ok * 3);
    // The stable prefix is read from the cache: a run shows ~0.79 of all input tokens as cache reads.
    expect(r.cacheReadShare).toBeGreaterThan(0.5);
    expect(r.cacheReadShare).toBeLessThan(1);
    expect(r.cacheReadShare).toBeCloseTo(r.usage.cacheRead / (r.usage.input + r.usage.cacheRead + r.usage.cacheWrite), 3);
    expect(r.usage.input + r.usage.cacheRead + r.usage.cacheWrite).toBeGreaterThan(0);

    const rows: Row[] = longSessionRows(r);
    const row = (start: string) => rows.find((x) => x.metric.includes(start));
    expect(row('request at turn 10 (')).toMatchObject({ unit: 'tokens', gateway: at10.tokens, ok: null });
    expect(row('largest request / context window')).toMatchObject({ target: 0.6, ok: r.largestRequestShare <= 0.6 });
    expect(row('cache reads / all input tokens')).toMatchObject({ target: 0.7, ok: r.cacheReadShare >= 0.7 });
    expect(row('failed turns')).toMatchObject({ gateway: r.failed, ok: r.failed === 0 });
    // A CPU window with failed turns is never a pass.
    const cpu = row('last / early window');
    if (r.cpuWindowFailures.early + r.cpuWindowFailures.late > 0) expect(cpu?.ok).toBe(false);
    else expect(cpu?.ok).toBe(r.cpuGrowth <= 1.5);
  });
});
