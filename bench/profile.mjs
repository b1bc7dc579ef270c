#!/usr/bin/env node
// CPU-profiles the gateway under the 32-session text load:
//
//   node bench/profile.mjs [--turns N] [--sessions N] [--top N]
//
// Starts the real gateway with V8's CPU profiler on (NODE_OPTIONS=--import=bench/lib/cpu-prof-preload.mjs), creates the sessions' client tokens,
// warms up, runs the load, stops the gateway with SIGTERM (the profile is written at exit),
// then prints the hot spots of the measured stretch only (samples are filtered by time) with
// dist positions mapped to the .ts sources. Writes bench/results/profile-latest.{json,txt} and
// keeps the raw profile in bench/results/profiles/ (open it in Chrome DevTools > Performance).
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { GATEWAY_CONFIG, loadBenchTestkit, checkEcho, createClientToken, mapLimit, raiseRateLimit, sleep, waitReady, within } from './lib/common.mjs';
import { formatSummary, isWorkspaceFrame, summarizeProfile } from './lib/cpuprofile.mjs';
import { ChatConnection, runLoad } from './lib/load.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    turns: { type: 'string', default: '2000' },
    sessions: { type: 'string', default: '32' },
    warmup: { type: 'string', default: '400' },
    top: { type: 'string', default: '15' },
    interval: { type: 'string', default: '500' }, // sampling interval, µs
  },
});
const turns = Number(args.turns);
const sessions = Number(args.sessions);

const { tk, tmp } = await loadBenchTestkit('profile', 'swb-prof-');
const profDir = join(tmp, 'prof');
mkdirSync(profDir);
const log = (m) => process.stderr.write(`[profile] ${m}\n`);

let fake;
const conns = [];
const cleanup = async () => {
  await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
  await tk.stopAllGateways().catch(() => undefined);
  await fake?.close().catch(() => undefined);
};
process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
const hard = setTimeout(() => {
  log('hard limit (240 s) reached');
  void cleanup().finally(() => process.exit(1));
}, 240_000);
hard.unref();

let code = 0;
try {
  fake = await tk.startFakeAnthropic({ logSource: 'bench-fake' });
  const drop = setInterval(() => fake.requests.splice(0), 500);
  drop.unref();
  const gw = await tk.startGateway({
    config: GATEWAY_CONFIG,
    modelUrl: fake.url,
    // Node 20 refuses --cpu-prof in NODE_OPTIONS; --import of a preload that drives the same V8 profiler is allowed.
    env: {
      NODE_OPTIONS: `--import=${pathToFileURL(join(here, 'lib', 'cpu-prof-preload.mjs')).href}`,
      BENCH_CPU_PROF_DIR: profDir,
      BENCH_CPU_PROF_INTERVAL_US: String(Number(args.interval)),
    },
    startTimeoutMs: 20_000,
  });
  await waitReady(gw.url);
  const rl = await raiseRateLimit(tk, gw);
  log(`rate limit: ${JSON.stringify(rl)}`);
  log(`gateway pid ${gw.pid} (profiling); creating ${sessions} client tokens …`);
  const tokens = await within(
    150_000,
    'token creation',
    mapLimit(
      Array.from({ length: sessions }, (_, i) => `prof-s${i}`),
      2,
      (n) => createClientToken(tk, gw, n),
    ),
  );
  for (const [i, token] of tokens.entries()) conns.push(await ChatConnection.open(gw.wsUrl, { token, label: `s${i}` }));
  const common = { pool: conns, concurrency: sessions, warmupPerWorker: 0, check: checkEcho, serverPid: gw.pid, deadline: performance.now() + 180_000 };
  const w = await runLoad({ ...common, name: 'warm-up', turns: Number(args.warmup), concurrency: Math.min(8, sessions) });
  log(`warm-up: ${w.turnsCompleted} turns, ${w.turnsPerSec.toFixed(0)}/s${w.failed ? `, ${w.failed} failed: ${JSON.stringify(w.errorCodes)}` : ''}`);
  if (w.failed > w.turnsPlanned / 10) throw new Error(`warm-up: ${w.failed} turns failed (${w.errorSamples.join('; ')})`);
  const from = Number(process.hrtime.bigint() / 1000n);
  const r = await runLoad({ ...common, name: `text x${sessions}`, turns });
  const to = Number(process.hrtime.bigint() / 1000n);
  log(
    `measured: ${r.turnsCompleted} turns in ${(r.wallMs / 1000).toFixed(1)} s = ${r.turnsPerSec.toFixed(0)}/s, p50 ${r.latencyMs.p50.toFixed(1)} ms, ` +
      `p99 ${r.latencyMs.p99.toFixed(1)} ms, server CPU ${r.serverCpuMsPerTurn?.toFixed(2)} ms/turn, other processes ${r.otherCpuCores?.toFixed(2)} cores` +
      (r.failed || r.wrongAnswers ? `, ${r.failed} failed / ${r.wrongAnswers} wrong: ${JSON.stringify(r.errorCodes)} ${r.errorSamples.join('; ')}` : ''),
  );
  await Promise.all(conns.map((c) => c.close()));
  conns.length = 0;
  await within(20_000, 'gateway stop', gw.stop(15_000));
  await sleep(200);
  const files = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error('the gateway wrote no .cpuprofile (did it exit cleanly on SIGTERM?)');
  const file = join(profDir, files[0]);
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const summary = summarizeProfile(profile, { top: Number(args.top), inclusiveFilter: isWorkspaceFrame, windowUs: [from, to] });
  const resultsDir = join(here, 'results');
  mkdirSync(join(resultsDir, 'profiles'), { recursive: true });
  const kept = join(resultsDir, 'profiles', 'gateway-text-x32.cpuprofile');
  copyFileSync(file, kept);
  const text = `${formatSummary(summary, { title: `gateway under ${sessions}-session text load (${r.turnsCompleted} turns, ${(summary.busyMs / r.turnsCompleted).toFixed(2)} ms busy per turn)` })}\n`;
  process.stdout.write(`\n${text}`);
  writeFileSync(join(resultsDir, 'profile-latest.txt'), text);
  writeFileSync(
    join(resultsDir, 'profile-latest.json'),
    `${JSON.stringify({ schema: 'switchboard-bench-profile/1', at: new Date().toISOString(), load: r, windowUs: [from, to], rawProfile: kept, summary }, null, 2)}\n`,
  );
  log(`raw profile: ${kept}`);
} catch (err) {
  code = 1;
  log(`FAILED: ${err instanceof Error ? err.stack : err}`);
} finally {
  await cleanup();
  clearTimeout(hard);
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(code);
