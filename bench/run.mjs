#!/usr/bin/env node
// `npm run bench`: end-to-end performance of the real gateway process against the testkit's fake
// Anthropic API (instant answers), next to a bare ws + SDK baseline. See bench/README.md.
//
//   node bench/run.mjs [--quick] [--out <file>] [--keep] [--window N] [--skip-long]
//
// Needs the compiled workspaces (`npx tsc -b`). Loopback only; every loop is bounded; the whole
// run has a hard deadline, and every child process is killed on exit, error or signal.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ChatConnection, runLoad } from './lib/load.mjs';
import { loadAvg1, memOf } from './lib/proc.mjs';
import { measureUnreachableStop } from './lib/unreachable-stop.mjs';
import { formatTable } from './lib/table.mjs';
import { measureMetricsScrape, measureScrapeAtScale } from './lib/metrics-scrape.mjs';
import { runLongSession } from './lib/long-session.mjs';
import { LONG_TARGETS, longSessionRows } from './lib/long-session-rows.mjs';
import { EXEC_TARGETS, execRows, runExecBench } from './lib/exec.mjs';
import { runStorageBench, storageRows } from './lib/storage-engines.mjs';
import { replicasRows, runReplicasBench } from './lib/replicas.mjs';
import {
  GATEWAY_CONFIG,
  WORKSPACE_FILE,
  WORKSPACE_TEXT,
  checkEcho,
  checkTool,
  createClientToken,
  gatewayStats,
  mapLimit,
  personWorkspace,
  raiseRateLimit,
  sleep,
  toolHandler,
  waitReady,
  within,
  loadBenchTestkit,
} from './lib/common.mjs';
import { median, round } from './lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..');

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
    // The long-session load's context window (models.claude-test.contextWindow), e.g. 20000 to reach compaction quickly.
    window: { type: 'string', default: '200000' },
    'skip-long': { type: 'boolean', default: false },
  },
});

// ---------------------------------------------------------------------------------------------
// Sizes and limits. `--quick` is a smoke run (seconds), not a measurement.
const Q = args.quick;
const PLAN = {
  coldStarts: Q ? 2 : 5,
  levels: [1, 8, 32],
  pool: 32, // sessions (principals, one client token and one connection each) shared by every gateway load
  warmup: Q ? { text: 40, tool: 16, concurrency: 8 } : { text: 300, tool: 80, concurrency: 8 },
  textTurns: Q ? { 1: 60, 8: 160, 32: 320 } : { 1: 300, 8: 800, 32: 1600 },
  toolTurns: Q ? { 1: 30, 8: 80, 32: 160 } : { 1: 100, 8: 300, 32: 600 },
  soakTurns: Q ? 500 : 5000,
  soakConcurrency: 32,
  warmupPerWorker: 1,
  turnTimeoutMs: 15_000,
  budgetMs: 270_000, // stop issuing turns after this (the run must stay under 5 minutes)
  // The long-session load (bench/lib/long-session.mjs) runs last, on its own gateway, with its own budget.
  longSession: args['skip-long'] ? null : { turns: Q ? 60 : 500, window: Number(args.window), budgetMs: 150_000 },
  // The replicas load (bench/lib/replicas.mjs): 32 sessions on SQLite ×1 and PostgreSQL ×1, ×2, ×3.
  replicasTurns: Q ? 160 : 800,
  hardLimitMs: 335_000 + (args['skip-long'] ? 0 : 160_000) + 240_000, // then give up, clean up and exit 1 (45 s of it for the exec and storage figures, 240 s for the replicas load)
};
if (PLAN.longSession && (!Number.isInteger(PLAN.longSession.window) || PLAN.longSession.window < 1024)) {
  process.stderr.write(`bench: --window must be a whole number of tokens ≥ 1024 (got ${args.window})\n`);
  process.exit(2);
}
const TARGETS = {
  coldStartMs: 1000,
  idleRssMB: 120,
  p50At1Ms: 5,
  turnsPerSecAt32: 500,
  baselineShareAt32: 0.25,
  rssGrowthMB: 30,
  longSession: LONG_TARGETS,
  exec: EXEC_TARGETS,
  hiBytes: 12 * 1024,
  // shutdownGrace (2 s) + 2 s
  unreachableStopMs: 4000,
};

const compiledTestkit = join(repo, 'packages', 'testkit', 'dist', 'index.js');
const compiledCli = join(repo, 'apps', 'gateway', 'dist', 'cli.js');
for (const f of [compiledTestkit, compiledCli]) {
  if (!existsSync(f)) {
    process.stderr.write(`bench: ${f} is missing; build first: npx tsc -b\n`);
    process.exit(2);
  }
}

/** Newest mtime (ms) of files ending in `ext` under `dir` (0 when none). */
function newest(dir, ext) {
  let max = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) max = Math.max(max, newest(p, ext));
    else if (e.name.endsWith(ext)) max = Math.max(max, statSync(p).mtimeMs);
  }
  return max;
}
/** Workspaces whose src/ is newer than their dist/ (the bench runs the compiled code). */
function staleWorkspaces() {
  const dirs = [join(repo, 'apps', 'gateway'), ...readdirSync(join(repo, 'packages')).map((d) => join(repo, 'packages', d))];
  return dirs.filter((d) => existsSync(join(d, 'dist')) && newest(join(d, 'src'), '.ts') > newest(join(d, 'dist'), '.js')).map((d) => d.slice(repo.length + 1));
}
function gitInfo() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'apps', 'packages'], { cwd: repo, encoding: 'utf8' }).trim() !== '';
    return { head, uncommittedSourceChanges: dirty };
  } catch {
    return null;
  }
}
const stale = staleWorkspaces();
if (stale.length > 0) process.stderr.write(`bench: WARNING: src newer than dist in ${stale.join(', ')} — run \`npx tsc -b\` first\n`);

// The fake and the harness append every request/log line to a run log: keep the bench's out of
// test-results/ (the test suite's canary scan reads that one).
const { tk, tmp: benchTmp } = await loadBenchTestkit('bench', 'swb-bench-');

const T0 = performance.now();
const deadline = T0 + PLAN.budgetMs;
const elapsed = () => `${((performance.now() - T0) / 1000).toFixed(1)}s`;
const log = (msg) => process.stderr.write(`[bench ${elapsed()}] ${msg}\n`);

// ---------------------------------------------------------------------------------------------
// Clean-up: always kill children, on success, error, signal or the hard limit.
let fake;
let baselineChild;
const connections = new Set();
let cleaning;
async function cleanup() {
  cleaning ??= (async () => {
    await Promise.all([...connections].map((c) => c.close().catch(() => undefined)));
    if (baselineChild && baselineChild.exitCode === null && baselineChild.signalCode === null) baselineChild.kill('SIGKILL');
    await tk.stopAllGateways().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    if (!args.keep) rmSync(benchTmp, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    log(`${sig}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}
const hardTimer = setTimeout(() => {
  log(`hard limit of ${PLAN.hardLimitMs / 1000}s reached: giving up`);
  void cleanup().finally(() => process.exit(1));
}, PLAN.hardLimitMs);
hardTimer.unref();

/** Spawn -> /readyz 200 wall time. The harness resolves once `<dataDir>/endpoint` appears. */
async function coldStart(opts) {
  const t0 = performance.now();
  const gw = await tk.startGateway({ config: GATEWAY_CONFIG, modelUrl: fake.url, startTimeoutMs: 20_000, ...opts });
  const tEndpoint = performance.now();
  const tReady = await waitReady(gw.url);
  const rssMB = memOf(gw.pid).rssMB;
  await within(15_000, 'gateway stop', gw.stop(5_000));
  return { ms: tReady - t0, endpointMs: tEndpoint - t0, rssMB };
}

async function openPool(url, tokens, labelPrefix, expectHello = true) {
  const pool = await mapLimit(tokens, 8, (token, i) => ChatConnection.open(url, { token, expectHello, label: `${labelPrefix}${i}`, timeoutMs: 10_000 }));
  for (const c of pool) connections.add(c);
  return pool;
}

async function closePool(pool) {
  await Promise.all(pool.map((c) => c.close()));
  for (const c of pool) connections.delete(c);
}

/** Starts the bare baseline server as a child process; resolves with { port, pid, child }. */
async function startBaseline(systemText, maxTokens) {
  const child = spawn(process.execPath, [join(here, 'baseline-server.mjs'), fake.url], {
    cwd: repo,
    env: { ...process.env, BENCH_SYSTEM: systemText, BENCH_MAX_TOKENS: String(maxTokens) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  tk.trackChild(child);
  baselineChild = child;
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  const rl = createInterface({ input: child.stdout });
  return within(
    10_000,
    'baseline server start',
    new Promise((resolve, reject) => {
      rl.once('line', (line) => resolve({ ...JSON.parse(line), child }));
      child.once('exit', (code) => reject(new Error(`baseline server exited (${code}): ${stderr}`)));
    }),
  );
}

/**
 * One search_files turn per case while /healthz is polled back to back until the turn ends:
 * `backtracking` is `(a+)+$` over lines that make a backtracking engine run for ages; `deadline` is
 * a pattern RE2 runs in linear but large time on 600 kB, stopped at limits.regexDeadline (1 s).
 */
async function regexStall(gw, conn) {
  const dir = personWorkspace(gw, conn);
  writeFileSync(join(dir, 'bench-redos.txt'), `${'a'.repeat(48)}!\n`.repeat(2000));
  writeFileSync(join(dir, 'bench-hard.txt'), `${tk.hardRegexText()}\n`);
  const cases = { backtracking: { pattern: '(a+)+$', path: 'bench-redos.txt' }, deadline: { pattern: '(a|b)*a(a|b){900}$', path: 'bench-hard.txt' } };
  const out = {};
  for (const [key, input] of Object.entries(cases)) {
    fake.setHandler((rec) => {
      const last = rec.body.messages?.at(-1);
      const answered = last?.role === 'user' && Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_result');
      return answered ? { text: 'searched' } : { toolUses: [{ name: 'search_files', input }] };
    });
    const polls = [];
    let done = false;
    const turn = conn.turn(`regex-${key}`, 'search', PLAN.turnTimeoutMs).finally(() => (done = true));
    while (!done) {
      const t0 = performance.now();
      await (await fetch(`${gw.url}/healthz`)).arrayBuffer();
      polls.push(performance.now() - t0);
    }
    const t = await turn;
    out[key] = {
      pattern: input.pattern,
      turnOk: t.ok,
      turnMs: round(t.ms, 1),
      healthzPolls: polls.length,
      healthzP50Ms: round(median(polls), 2),
      healthzMaxMs: round(Math.max(0, ...polls), 2),
    };
  }
  fake.setHandler(undefined);
  return out;
}

const describeLoad = (r) =>
  `${r.name}: ${r.turnsCompleted} turns in ${(r.wallMs / 1000).toFixed(2)}s = ${r.turnsPerSec.toFixed(0)}/s, ` +
  `p50 ${r.latencyMs.p50?.toFixed(2)} ms, p99 ${r.latencyMs.p99?.toFixed(2)} ms` +
  (r.serverCpuMsPerTurn !== null ? `, server CPU ${r.serverCpuMsPerTurn.toFixed(2)} ms/turn (${(r.serverCpuUtil * 100).toFixed(0)}% of a core)` : '') +
  `, bench CPU ${(r.benchCpuUtil * 100).toFixed(0)}%` +
  (r.otherCpuCores !== null ? `, other processes ${r.otherCpuCores.toFixed(2)} cores` : '') +
  `, history ${r.historyTurnsAtStart.toFixed(0)} turns/session at start` +
  (r.serverRssAfterMB !== null ? `, server RSS after ${r.serverRssAfterMB.toFixed(0)} MB` : '') +
  (r.measured?.eventLoopDelayMs
    ? `, event-loop delay p50/p99/max ${r.measured.eventLoopDelayMs.p50}/${r.measured.eventLoopDelayMs.p99}/${r.measured.eventLoopDelayMs.max} ms`
    : '') +
  (r.failed || r.wrongAnswers ? ` — ${r.failed} failed, ${r.wrongAnswers} wrong: ${r.errorSamples.join('; ')}` : '') +
  (r.truncated ? ' (TRUNCATED by the time budget)' : '') +
  (r.aborted ? ' (ABORTED: too many errors)' : '');

function compactLoad(r) {
  return {
    concurrency: r.concurrency,
    turnsPlanned: r.turnsPlanned,
    turnsCompleted: r.turnsCompleted,
    failed: r.failed,
    wrongAnswers: r.wrongAnswers,
    errorCodes: r.errorCodes,
    errorSamples: r.errorSamples,
    truncated: r.truncated,
    aborted: r.aborted,
    wallMs: round(r.wallMs, 1),
    turnsPerSec: round(r.turnsPerSec, 1),
    latencyMs: Object.fromEntries(Object.entries(r.latencyMs).map(([k, v]) => [k, k === 'n' ? v : round(v, 3)])),
    acceptedMs: { p50: round(r.acceptedMs.p50, 3), p99: round(r.acceptedMs.p99, 3) },
    sessionsReset: r.sessionsReset,
    historyTurnsAtStart: round(r.historyTurnsAtStart, 1),
    serverCpuMsPerTurn: round(r.serverCpuMsPerTurn, 3),
    serverCpuUtil: round(r.serverCpuUtil, 3),
    benchCpuUtil: round(r.benchCpuUtil, 3),
    otherCpuCores: round(r.otherCpuCores, 2),
    loadAvg1: r.loadAvg1,
    serverRssAfterMB: round(r.serverRssAfterMB, 1),
    eventLoopDelayMs: r.measured?.eventLoopDelayMs ?? null,
    serverHeapUsedAfterMB: r.measured?.memory?.heapUsedMB ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
const results = {
  schema: 'switchboard-bench/1',
  startedAt: new Date().toISOString(),
  quick: Q,
  machine: {
    loadAvg1AtStart: loadAvg1(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: (await import('node:os')).cpus().length,
  },
  git: gitInfo(),
  staleDist: stale,
  plan: PLAN,
  targets: TARGETS,
  gateway: {},
  baseline: {},
  notes: [],
};

let exitCode = 0;
try {
  fake = await tk.startFakeAnthropic({ logSource: 'bench-fake' });
  // The fake keeps every request; the bench drops them as it goes so its own heap stays flat.
  const dropRecorded = setInterval(() => fake.requests.splice(0), 500);
  dropRecorded.unref();
  log(`fake Anthropic API at ${fake.url}; ${PLAN.coldStarts} cold starts per mode …`);

  // --- cold start --------------------------------------------------------------------------
  const fresh = [];
  for (let i = 0; i < PLAN.coldStarts; i++) fresh.push(await coldStart({}));
  const sameDir = join(benchTmp, 'cold-same-dir');
  mkdirSync(sameDir, { recursive: true });
  await coldStart({ dataDir: sameDir }); // first start creates the database and credentials
  const reused = [];
  for (let i = 0; i < PLAN.coldStarts; i++) reused.push(await coldStart({ dataDir: sameDir }));
  results.gateway.coldStart = {
    loadAvg1AtEnd: loadAvg1(),
    method: 'spawn of `node apps/gateway/dist/cli.js start` -> harness sees <dataDir>/endpoint (fs.watch) -> GET /readyz polled every 2 ms until 200',
    freshDataDir: {
      medianMs: round(median(fresh.map((r) => r.ms)), 1),
      runsMs: fresh.map((r) => round(r.ms, 1)),
      endpointMedianMs: round(median(fresh.map((r) => r.endpointMs)), 1),
    },
    reusedDataDir: {
      medianMs: round(median(reused.map((r) => r.ms)), 1),
      runsMs: reused.map((r) => round(r.ms, 1)),
      endpointMedianMs: round(median(reused.map((r) => r.endpointMs)), 1),
    },
  };
  log(`cold start: fresh data dir median ${results.gateway.coldStart.freshDataDir.medianMs} ms, reused ${results.gateway.coldStart.reusedDataDir.medianMs} ms`);

  // --- SIGTERM with every platform unreachable ------------------------------------------------
  results.gateway.unreachableStop = {};
  for (const withTelegram of [false, true]) {
    const key = withTelegram ? 'telegramAndSlack' : 'slackOnly';
    const r = await within(45_000, 'unreachable stop', measureUnreachableStop(tk, fake.url, { withTelegram }));
    results.gateway.unreachableStop[key] = r;
    log(`SIGTERM with unreachable platforms (${key}): ${r.timedOut ? `no exit within ${r.capMs} ms` : `${r.ms} ms, exit ${r.exitCode}`}`);
  }

  // --- the measured gateway ------------------------------------------------------------------
  const gw = await tk.startGateway({ config: GATEWAY_CONFIG, modelUrl: fake.url, startTimeoutMs: 20_000 });
  await waitReady(gw.url);
  const rssAtReady = memOf(gw.pid).rssMB;
  await sleep(1_000);
  const idle = memOf(gw.pid);
  results.gateway.idleRss = { atReadyMB: round(rssAtReady, 1), after1sMB: round(idle.rssMB, 1), method: '/proc/<pid>/status VmRSS, no connection yet' };
  log(`gateway pid ${gw.pid}: idle RSS ${idle.rssMB.toFixed(1)} MB`);
  // The gateway's own event-loop delay (GET /api/v1/stats), reset when a load's measured part
  // starts and read when it ends; null on a gateway without the route.
  const hasStats = (await gatewayStats(tk, gw)) !== null;
  const statsHooks = hasStats ? { onMeasureStart: () => gatewayStats(tk, gw, true), onMeasureEnd: () => gatewayStats(tk, gw) } : {};
  results.gateway.rateLimit = await raiseRateLimit(tk, gw);
  if (results.gateway.rateLimit.applied) {
    results.notes.push(
      `the per-sender rate limit of websocket:default was raised to ${JSON.stringify(results.gateway.rateLimit.effective)} through the control API (the default burst 10 / 20 per minute would cap each session at 20 turns a minute); everything else is default`,
    );
  }

  const names = Array.from({ length: PLAN.pool }, (_, i) => `bench-s${i}`);
  log(`creating ${names.length} client tokens with the CLI (2 at a time) …`);
  const tokens = await within(
    150_000,
    'token creation',
    mapLimit(names, 2, (n) => createClientToken(tk, gw, n)),
  );
  const pool = await openPool(gw.wsUrl, tokens, 's');
  log(`${pool.length} sessions connected`);
  // The read_file load reads this file in each person's own workspace.
  for (const c of pool) writeFileSync(join(personWorkspace(gw, c), WORKSPACE_FILE), WORKSPACE_TEXT);

  // --- bytes of a first "hi": the first turn of a fresh session ------------------------------
  let hiReq;
  fake.setHandler((rec) => {
    if (rec.path === '/v1/messages') hiReq ??= rec;
    return undefined; // fall through to the default echo
  });
  const hi = await pool[0].turn('hi-1', 'hi', PLAN.turnTimeoutMs);
  fake.setHandler(undefined);
  if (!hi.ok) throw new Error(`"hi" turn failed: ${hi.code} ${hi.message ?? ''}`);
  if (!hiReq) throw new Error('the fake saw no request for "hi"');
  const hiBody = hiReq.body;
  const bytes = (v) => Buffer.byteLength(JSON.stringify(v ?? null));
  results.gateway.hiRequest = {
    bodyBytes: Buffer.byteLength(hiReq.rawBody),
    toolsBytes: bytes(hiBody.tools),
    systemBytes: bytes(hiBody.system),
    messagesBytes: bytes(hiBody.messages),
    tools: (hiBody.tools ?? []).map((t) => ({ name: t.name, bytes: bytes(t) })),
    latencyMs: round(hi.ms, 2),
  };
  const systemText = Array.isArray(hiBody.system) ? hiBody.system.map((b) => b.text).join('\n') : String(hiBody.system ?? '');
  const maxTokens = hiBody.max_tokens ?? 4096;
  log(`"hi": ${results.gateway.hiRequest.bodyBytes} request bytes (tools ${results.gateway.hiRequest.toolsBytes})`);

  // --- warm-up (JIT, caches, SQLite pages): unmeasured --------------------------------------
  fake.setHandler(undefined); // default echo
  const warm = { concurrency: PLAN.warmup.concurrency, warmupPerWorker: 0, serverPid: gw.pid, deadline, turnTimeoutMs: PLAN.turnTimeoutMs, pool };
  const w1 = await runLoad({ ...warm, name: 'gateway warm-up text', turns: PLAN.warmup.text, check: checkEcho });
  fake.setHandler(toolHandler);
  const w2 = await runLoad({ ...warm, name: 'gateway warm-up read_file', turns: PLAN.warmup.tool, check: checkTool });
  fake.setHandler(undefined);
  log(`${describeLoad(w1)}\n  ${describeLoad(w2)}`);
  results.gateway.warmup = { text: compactLoad(w1), tool: compactLoad(w2) };

  // --- latency / throughput levels -----------------------------------------------------------
  // Each kind of turn runs at every concurrency level: text (the default echo) and one read_file call.
  const kinds = [
    { key: 'text', label: 'text', handler: undefined, turns: PLAN.textTurns, check: checkEcho },
    { key: 'tool', label: 'read_file', handler: toolHandler, turns: PLAN.toolTurns, check: checkTool },
  ];
  for (const kind of kinds) {
    results.gateway[kind.key] = {};
    fake.setHandler(kind.handler);
    for (const c of PLAN.levels) {
      const r = await runLoad({
        name: `gateway ${kind.label} x${c}`,
        pool,
        concurrency: c,
        turns: kind.turns[c],
        warmupPerWorker: PLAN.warmupPerWorker,
        check: kind.check,
        serverPid: gw.pid,
        deadline,
        turnTimeoutMs: PLAN.turnTimeoutMs,
        freshSessions: true,
        ...statsHooks,
      });
      log(describeLoad(r));
      results.gateway[kind.key][c] = compactLoad(r);
    }
  }
  fake.setHandler(undefined);

  // --- /healthz while a catastrophic search_files runs (regexes on RE2, matched in a worker) ----
  results.gateway.regexStall = await regexStall(gw, pool[0]);
  log(
    `regex stall: ${Object.entries(results.gateway.regexStall)
      .map(([k, r]) => `${k} ${r.pattern}: turn ${r.turnMs} ms, /healthz p50 ${r.healthzP50Ms} ms max ${r.healthzMaxMs} ms over ${r.healthzPolls} polls`)
      .join('; ')}`,
  );

  // --- the bare baseline (the gateway stays up, idle, meanwhile) ------------------------------
  const base = await startBaseline(systemText, maxTokens);
  await sleep(500);
  results.baseline.idleRssMB = round(memOf(base.pid).rssMB, 1);
  results.baseline.description =
    'plain `ws` server (child process) -> @anthropic-ai/sdk messages.create({stream:true}) against the same fake; deltas + final back; same system prompt and max_tokens as the gateway, no tools, auth, storage or loop';
  const basePool = [];
  for (let i = 0; i < 32; i++) basePool.push(await ChatConnection.open(`ws://127.0.0.1:${base.port}`, { expectHello: false, label: `b${i}` }));
  for (const c of basePool) connections.add(c);
  const bw = await runLoad({
    name: 'baseline warm-up',
    pool: basePool,
    concurrency: PLAN.warmup.concurrency,
    turns: PLAN.warmup.text,
    warmupPerWorker: 0,
    check: checkEcho,
    serverPid: base.pid,
    deadline,
  });
  log(describeLoad(bw));
  results.baseline.text = {};
  for (const c of PLAN.levels) {
    const r = await runLoad({
      name: `baseline text x${c}`,
      pool: basePool,
      concurrency: c,
      turns: PLAN.textTurns[c],
      warmupPerWorker: PLAN.warmupPerWorker,
      check: checkEcho,
      serverPid: base.pid,
      deadline,
      turnTimeoutMs: PLAN.turnTimeoutMs,
    });
    log(describeLoad(r));
    results.baseline.text[c] = compactLoad(r);
  }
  results.baseline.rssAfterMB = round(memOf(base.pid).rssMB, 1);
  await closePool(basePool);
  base.child.kill('SIGTERM');
  await within(
    5_000,
    'baseline exit',
    new Promise((r) => (base.child.exitCode !== null || base.child.signalCode !== null ? r() : base.child.once('exit', r))),
  ).catch(() => base.child.kill('SIGKILL'));
  // --- RSS over the soak ---------------------------------------------------------------------
  const soakPool = pool;
  await sleep(500);
  const rssBefore = memOf(gw.pid).rssMB;
  const heapBefore = hasStats ? ((await gatewayStats(tk, gw))?.memory?.heapUsedMB ?? null) : null;
  const samples = [{ turns: 0, rssMB: round(rssBefore, 1), t: 0 }];
  const soakStart = performance.now();
  const every = Math.max(100, Math.floor(PLAN.soakTurns / 10));
  const soak = await runLoad({
    name: `gateway soak x${PLAN.soakConcurrency}`,
    pool: soakPool,
    concurrency: PLAN.soakConcurrency,
    turns: PLAN.soakTurns,
    warmupPerWorker: 0,
    check: checkEcho,
    serverPid: gw.pid,
    deadline,
    turnTimeoutMs: PLAN.turnTimeoutMs,
    freshSessions: true,
    ...statsHooks,
    onProgress: (n) => {
      if (n % every === 0) samples.push({ turns: n, rssMB: round(memOf(gw.pid).rssMB, 1), t: round(performance.now() - soakStart, 0) });
    },
  });
  log(describeLoad(soak));
  const rssAfter = memOf(gw.pid).rssMB;
  await sleep(2_000);
  const rssAfterSettle = memOf(gw.pid);
  const heapAfter = hasStats ? ((await gatewayStats(tk, gw))?.memory?.heapUsedMB ?? null) : null;
  const rates = samples.slice(1).map((s, i) => ({ upTo: s.turns, turnsPerSec: round(((s.turns - samples[i].turns) * 1000) / (s.t - samples[i].t), 0) }));
  results.gateway.soak = {
    ...compactLoad(soak),
    sessions: PLAN.soakConcurrency,
    rssBeforeMB: round(rssBefore, 1),
    rssAfterMB: round(rssAfter, 1),
    rssAfter2sMB: round(rssAfterSettle.rssMB, 1),
    peakRssMB: round(rssAfterSettle.hwmMB, 1),
    growthMB: round(rssAfterSettle.rssMB - rssBefore, 1),
    heapUsedBeforeMB: heapBefore,
    heapUsedAfter2sMB: heapAfter,
    samples,
    turnsPerSecByChunk: rates,
    note: `${PLAN.soakTurns} echo turns over ${PLAN.soakConcurrency} sessions (${soak.sessionsReset ? 'fresh: new_session first' : 'continuing their history'}; about ${Math.round(PLAN.soakTurns / PLAN.soakConcurrency)} turns each, on top of ${round(soak.historyTurnsAtStart, 0)}); growth = RSS 2 s after the last turn minus RSS before the first`,
  };
  log(
    `soak: RSS ${rssBefore.toFixed(1)} -> ${rssAfter.toFixed(1)} MB (${rssAfterSettle.rssMB.toFixed(1)} after 2 s); turns/s by chunk ${rates.map((r) => r.turnsPerSec).join(' ')}`,
  );
  results.gateway.eventLoopDelayP99Ms = results.gateway.text[32]?.eventLoopDelayMs?.p99 ?? null;
  if (results.gateway.eventLoopDelayP99Ms !== null) {
    results.notes.push(
      'event-loop delay comes from the gateway (GET /api/v1/stats: monitorEventLoopDelay, the 10 ms sampling interval subtracted, so an idle loop reads about 0 ms)',
    );
  } else {
    results.notes.push(
      'event-loop delay p99 during the 32-session run: n/a — this gateway has no GET /api/v1/stats, and the delay cannot be measured from outside the process.',
    );
  }
  // --- one Prometheus scrape, with the series the loads left (bench/lib/metrics-scrape.mjs) ----
  try {
    results.gateway.metricsScrape = await within(30_000, 'metrics scrape', measureMetricsScrape(gw, 50));
    if (results.gateway.metricsScrape) {
      const m = results.gateway.metricsScrape;
      log(`metrics scrape: median ${m.medianMs} ms over ${m.runs} (max ${m.maxMs} ms), ${m.series} series, ${m.bytes} bytes`);
      results.gateway.metricsScrapeAtScale = await within(30_000, 'metrics render at scale', measureScrapeAtScale(repo, 200));
      const s = results.gateway.metricsScrapeAtScale;
      log(`metrics render at scale (in-process): median ${s.medianMs} ms over ${s.runs}, ${s.series} series, ${s.bytes} bytes`);
    }
  } catch (err) {
    exitCode = 1;
    results.gateway.metricsScrape = { error: err instanceof Error ? err.message : String(err) };
    log(`metrics scrape FAILED: ${err instanceof Error ? err.stack : err}`);
  }
  await closePool(pool);
  await within(15_000, 'gateway stop', gw.stop(5_000));

  clearInterval(dropRecorded);

  // --- the long session (its own fake and gateway) -------------------------------------------
  if (PLAN.longSession) {
    const { turns, window, budgetMs } = PLAN.longSession;
    try {
      results.longSession = await runLongSession(tk, { turns, window, deadline: performance.now() + budgetMs, log });
      const ls = results.longSession;
      log(
        `long session: ${ls.turnsDone} turns in ${(ls.loadWallMs / 1000).toFixed(1)}s, ${ls.failed} failed, largest request ${ls.largestRequestTokens} tokens (${(ls.largestRequestShare * 100).toFixed(0)}% of ${window}), ` +
          `CPU/turn ${ls.cpuMsPerTurnEarly} -> ${ls.cpuMsPerTurnLate} ms, ${ls.compactEntries ?? 'n/a'} compactions, cache-read share ${ls.cacheReadShare}`,
      );
    } catch (err) {
      exitCode = 1;
      results.longSession = { error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) };
      log(`long session FAILED: ${err instanceof Error ? err.stack : err}`);
    }
  }

  // --- exec: the command checks and the bubblewrap sandbox, in-process (bench/lib/exec.mjs) ---
  try {
    results.exec = await runExecBench(repo, { iterations: Q ? 20 : 200, runs: Q ? 5 : 20, log });
  } catch (err) {
    exitCode = 1;
    results.exec = { error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) };
    log(`exec FAILED: ${err instanceof Error ? err.stack : err}`);
  }

  // --- storage: one turn's writes on SQLite and on a real PostgreSQL (bench/lib/storage-engines.mjs) ---
  try {
    results.storage = await runStorageBench(repo, { turns: Q ? 200 : 2000, log });
  } catch (err) {
    exitCode = 1;
    results.storage = { error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) };
    log(`storage FAILED: ${err instanceof Error ? err.stack : err}`);
  }

  // --- replicas: 32 sessions through real gateways, SQLite ×1 vs PostgreSQL ×1/×2/×3 (bench/lib/replicas.mjs) ---
  try {
    results.replicas = await runReplicasBench(tk, { modelUrl: fake.url, turns: PLAN.replicasTurns, log });
  } catch (err) {
    exitCode = 1;
    results.replicas = { error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) };
    log(`replicas FAILED: ${err instanceof Error ? err.stack : err}`);
  }
} catch (err) {
  exitCode = 1;
  results.error = err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err);
  log(`FAILED: ${err instanceof Error ? err.stack : err}`);
} finally {
  await cleanup();
  clearTimeout(hardTimer);
}

results.finishedAt = new Date().toISOString();
results.durationSec = round((performance.now() - T0) / 1000, 1);
if (
  Object.values(results.gateway.text ?? {})
    .concat(Object.values(results.gateway.tool ?? {}), Object.values(results.baseline.text ?? {}))
    .some((r) => r.truncated)
) {
  results.notes.push('some loads were cut short by the time budget: see `truncated` per load');
}
const allLoads = [
  ...Object.values(results.gateway.text ?? {}),
  ...Object.values(results.gateway.tool ?? {}),
  ...(results.gateway.soak ? [results.gateway.soak] : []),
  ...Object.values(results.baseline.text ?? {}),
];
const maxOther = Math.max(0, ...allLoads.map((l) => l.otherCpuCores ?? 0));
results.machine.maxOtherCpuCoresDuringLoads = round(maxOther, 2);
results.machine.loadAvg1AtEnd = loadAvg1();
if (maxOther > 0.25) {
  results.notes.push(
    `other processes on this machine used up to ${maxOther.toFixed(2)} of ${results.machine.cpus} cores during the loads (see otherCpuCores per load): throughput and latency are disturbed; compare server CPU ms/turn instead, or re-run on a quiet machine`,
  );
}
results.table = buildTable(results);
printTable(results.table, results);
const outFile = args.out ?? join(here, 'results', 'latest.json');
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, `${JSON.stringify(results, null, 2)}\n`);
process.stderr.write(`\nwritten: ${outFile} (${results.durationSec}s)\n`);
process.exit(exitCode);

// ---------------------------------------------------------------------------------------------
function buildTable(r) {
  const rows = [];
  const g = r.gateway;
  const b = r.baseline;
  const row = (metric, unit, gateway, baseline, target, better) => {
    let ratio = null;
    if (typeof gateway === 'number' && typeof baseline === 'number' && baseline !== 0) ratio = gateway / baseline;
    let ok = null;
    if (target !== null && typeof gateway === 'number') ok = better === 'lower' ? gateway <= target : gateway >= target;
    rows.push({ metric, unit, gateway: round(gateway, 2), baseline: round(baseline, 2), ratio: round(ratio, 3), target, better, ok });
  };
  row('cold start, fresh data dir (median of runs)', 'ms', g.coldStart?.freshDataDir.medianMs, null, TARGETS.coldStartMs, 'lower');
  row('cold start, reused data dir (median of runs)', 'ms', g.coldStart?.reusedDataDir.medianMs, null, TARGETS.coldStartMs, 'lower');
  row('idle RSS after start (+1 s)', 'MB', g.idleRss?.after1sMB, b.idleRssMB, TARGETS.idleRssMB, 'lower');
  // "h~N": the sessions' mean transcript length (turns) when the load began.
  const h = (t) => (t ? ` h~${Math.round(t.historyTurnsAtStart)}` : '');
  for (const c of PLAN.levels) {
    const t = g.text?.[c];
    const bt = b.text?.[c];
    row(`text x${c}${h(t)}: p50 latency`, 'ms', t?.latencyMs.p50, bt?.latencyMs.p50, c === 1 ? TARGETS.p50At1Ms : null, 'lower');
    row(`text x${c}${h(t)}: p99 latency`, 'ms', t?.latencyMs.p99, bt?.latencyMs.p99, null, 'lower');
    row(`text x${c}${h(t)}: throughput`, 'turns/s', t?.turnsPerSec, bt?.turnsPerSec, c === 32 ? TARGETS.turnsPerSecAt32 : null, 'higher');
    row(`text x${c}${h(t)}: server CPU per turn`, 'ms', t?.serverCpuMsPerTurn, bt?.serverCpuMsPerTurn, null, 'lower');
  }
  for (const c of PLAN.levels) {
    const t = g.tool?.[c];
    row(`read_file x${c}${h(t)}: p50 latency`, 'ms', t?.latencyMs.p50, null, null, 'lower');
    row(`read_file x${c}${h(t)}: p99 latency`, 'ms', t?.latencyMs.p99, null, null, 'lower');
    row(`read_file x${c}${h(t)}: throughput`, 'turns/s', t?.turnsPerSec, null, null, 'higher');
    row(`read_file x${c}${h(t)}: server CPU per turn`, 'ms', t?.serverCpuMsPerTurn, null, null, 'lower');
  }
  for (const [k, rs] of Object.entries(g.regexStall ?? {})) {
    row(`/healthz while search_files ${rs.pattern} runs (${k}): max poll latency`, 'ms', rs.healthzMaxMs, null, null, 'lower');
  }
  const share = g.text?.[32] && b.text?.[32] ? g.text[32].turnsPerSec / b.text[32].turnsPerSec : null;
  row('text x32 throughput as a share of the baseline', 'ratio', share, null, TARGETS.baselineShareAt32, 'higher');
  row(`RSS before ${PLAN.soakTurns} turns`, 'MB', g.soak?.rssBeforeMB, null, null, 'lower');
  row(`RSS after ${PLAN.soakTurns} turns (+2 s)`, 'MB', g.soak?.rssAfter2sMB, null, null, 'lower');
  row(`RSS growth over ${PLAN.soakTurns} turns`, 'MB', g.soak?.growthMB, null, TARGETS.rssGrowthMB, 'lower');
  if (typeof g.soak?.heapUsedBeforeMB === 'number') {
    row(`JS heap used before ${PLAN.soakTurns} turns (GET /api/v1/stats)`, 'MB', g.soak.heapUsedBeforeMB, null, null, 'lower');
    row(`JS heap used after ${PLAN.soakTurns} turns (+2 s)`, 'MB', g.soak.heapUsedAfter2sMB, null, null, 'lower');
  }
  row(`soak x${PLAN.soakConcurrency}${h(g.soak)}: throughput`, 'turns/s', g.soak?.turnsPerSec, null, null, 'higher');
  row(`soak x${PLAN.soakConcurrency}${h(g.soak)}: server CPU per turn`, 'ms', g.soak?.serverCpuMsPerTurn, null, null, 'lower');
  if (typeof g.eventLoopDelayP99Ms === 'number')
    row(`text x32${h(g.text?.[32])}: event-loop delay p99 (gateway stats)`, 'ms', g.eventLoopDelayP99Ms, null, null, 'lower');
  else
    rows.push({
      metric: 'event-loop delay p99 during text x32',
      unit: 'ms',
      gateway: 'n/a',
      baseline: null,
      ratio: null,
      target: null,
      better: 'lower',
      ok: null,
    });
  const us = g.unreachableStop ?? {};
  for (const [key, label] of [
    ['slackOnly', 'Slack'],
    ['telegramAndSlack', 'Telegram + Slack'],
  ]) {
    const u = us[key];
    if (u?.timedOut)
      rows.push({
        metric: `SIGTERM with unreachable platforms (${label}, grace 2 s)`,
        unit: 'ms',
        gateway: `>${u.capMs}`,
        baseline: null,
        ratio: null,
        target: TARGETS.unreachableStopMs,
        better: 'lower',
        ok: false,
      });
    else row(`SIGTERM with unreachable platforms (${label}, grace 2 s)`, 'ms', u?.ms, null, TARGETS.unreachableStopMs, 'lower');
  }
  row('request bytes for a first "hi" (default tools)', 'bytes', g.hiRequest?.bodyBytes, null, TARGETS.hiBytes, 'lower');
  if (typeof g.metricsScrape?.medianMs === 'number')
    row(`GET /metrics: one scrape (median of ${g.metricsScrape.runs}, ${g.metricsScrape.series} series)`, 'ms', g.metricsScrape.medianMs, null, null, 'lower');
  if (g.metricsScrapeAtScale)
    row(
      `metrics render, in-process (median of ${g.metricsScrapeAtScale.runs}, ${g.metricsScrapeAtScale.series} series)`,
      'ms',
      g.metricsScrapeAtScale.medianMs,
      null,
      null,
      'lower',
    );
  if (r.longSession?.turnsDone !== undefined) rows.push(...longSessionRows(r.longSession));
  if (r.exec?.checkMicrosMedian !== undefined) rows.push(...execRows(r.exec));
  if (r.storage?.levels) rows.push(...storageRows(r.storage));
  if (r.replicas?.sessions) rows.push(...replicasRows(r.replicas));
  return rows;
}

function printTable(rows, r) {
  const out = formatTable(rows);
  process.stdout.write(`\nSwitchboard bench${r.quick ? ' (QUICK: smoke sizes, not a measurement)' : ''} — ${r.machine.cpus} CPU(s), Node ${r.machine.node}\n`);
  process.stdout.write(`${out.join('\n')}\n`);
  process.stdout.write(
    'h~N = mean turns already in each session when the measured part of a load began (each gateway load starts with new_session, then 1 warm-up turn per session)\n',
  );
  for (const n of r.notes) process.stdout.write(`note: ${n}\n`);
  for (const s of r.longSession?.failureSamples ?? []) process.stdout.write(`long session: ${s}\n`);
  if (r.longSession?.transcriptError) process.stdout.write(`long session: compactions from the transcript n/a (${r.longSession.transcriptError})\n`);
  if (r.longSession?.error) process.stdout.write(`LONG SESSION ERROR: ${r.longSession.error.split('\n')[0]}\n`);
  if (r.error) process.stdout.write(`ERROR: ${r.error.split('\n')[0]}\n`);
}
