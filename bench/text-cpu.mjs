#!/usr/bin/env node
// Server CPU per text turn at 32 sessions, only: one gateway, a warm-up, then `--rounds` text x32
// loads of `--turns` turns each. A focused figure for comparing two builds on a busy machine
// (interleave runs of each tree; compare medians). See bench/README.md.
//
//   node bench/text-cpu.mjs [--rounds 3] [--turns 1600] [--json]
//
// Needs the compiled workspaces (`npx tsc -b`). Loopback only; children are killed on exit.
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ChatConnection, runLoad } from './lib/load.mjs';
import { GATEWAY_CONFIG, loadBenchTestkit, checkEcho, createClientToken, mapLimit, raiseRateLimit, waitReady, within } from './lib/common.mjs';
import { loadAvg1 } from './lib/proc.mjs';
import { median, round } from './lib/stats.mjs';

const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, turns: { type: 'string', default: '1600' }, json: { type: 'boolean', default: false } },
});
const rounds = Math.max(1, Number(args.rounds) || 3);
const turns = Math.max(32, Number(args.turns) || 1600);
const { tk, tmp: benchTmp } = await loadBenchTestkit('text-cpu', 'swb-text-cpu-');
const log = (msg) => process.stderr.write(`[text-cpu] ${msg}\n`);

let fake;
const pool = [];
const hardTimer = setTimeout(() => {
  log('hard limit of 280 s reached: giving up');
  void cleanup().finally(() => process.exit(1));
}, 280_000);
hardTimer.unref();
async function cleanup() {
  await Promise.all(pool.map((c) => c.close().catch(() => undefined)));
  await tk.stopAllGateways().catch(() => undefined);
  await fake?.close().catch(() => undefined);
  rmSync(benchTmp, { recursive: true, force: true });
}

const out = { turnsPerRound: turns, rounds: [], loadAvg1AtStart: loadAvg1() };
let exitCode = 0;
try {
  fake = await tk.startFakeAnthropic({ logSource: 'bench-fake' });
  const dropRecorded = setInterval(() => fake.requests.splice(0), 500);
  dropRecorded.unref();
  const gw = await tk.startGateway({ config: GATEWAY_CONFIG, modelUrl: fake.url, startTimeoutMs: 20_000 });
  await waitReady(gw.url);
  await raiseRateLimit(tk, gw);
  const names = Array.from({ length: 32 }, (_, i) => `bench-s${i}`);
  const tokens = await within(
    150_000,
    'token creation',
    mapLimit(names, 2, (n) => createClientToken(tk, gw, n)),
  );
  for (const [i, token] of tokens.entries()) pool.push(await ChatConnection.open(gw.wsUrl, { token, expectHello: true, label: `s${i}`, timeoutMs: 10_000 }));
  const common = { pool, serverPid: gw.pid, deadline: performance.now() + 250_000, turnTimeoutMs: 15_000, check: checkEcho };
  // As many turns as `npm run bench` runs before its x32 text load (JIT, caches, SQLite pages).
  await runLoad({ ...common, name: 'warm-up', concurrency: 32, turns: 1500, warmupPerWorker: 0 });
  for (let i = 0; i < rounds; i++) {
    const r = await runLoad({ ...common, name: `text x32 #${i + 1}`, concurrency: 32, turns, warmupPerWorker: 1, freshSessions: true });
    if (r.failed > 0 || r.wrongAnswers > 0 || r.aborted)
      throw new Error(`round ${i + 1}: ${r.failed} failed, ${r.wrongAnswers} wrong answers${r.aborted ? ', aborted' : ''}`);
    out.rounds.push({ serverCpuMsPerTurn: round(r.serverCpuMsPerTurn, 3), turnsPerSec: round(r.turnsPerSec, 0), otherCpuCores: round(r.otherCpuCores, 2) });
    log(
      `round ${i + 1}: ${round(r.serverCpuMsPerTurn, 3)} ms server CPU per turn, ${round(r.turnsPerSec, 0)} turns/s, other processes ${round(r.otherCpuCores, 2)} cores`,
    );
  }
  out.medianServerCpuMsPerTurn = round(median(out.rounds.map((r) => r.serverCpuMsPerTurn)), 3);
  out.loadAvg1AtEnd = loadAvg1();
} catch (err) {
  exitCode = 1;
  out.error = err instanceof Error ? err.message : String(err);
  log(`FAILED: ${err instanceof Error ? err.stack : err}`);
} finally {
  await cleanup();
  clearTimeout(hardTimer);
}
process.stdout.write(
  args.json
    ? `${JSON.stringify(out)}\n`
    : `text x32 server CPU per turn: median ${out.medianServerCpuMsPerTurn} ms over ${out.rounds.length} rounds of ${turns}\n`,
);
process.exit(exitCode);
