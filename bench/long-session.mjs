#!/usr/bin/env node
// The long-session load alone: one session, `--turns` turns (default 500), each a 200-character
// message, one read_file of a 4 KB workspace file and a 200-character answer, through the real
// gateway process and the testkit fake model. See bench/README.md ("Long session").
//
//   node bench/long-session.mjs [--turns 500] [--window 200000] [--json] [--out <file>]
//
// Needs the compiled workspaces (`npx tsc -b`). Loopback only; children are killed on exit.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadBenchTestkit } from './lib/common.mjs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { runLongSession } from './lib/long-session.mjs';
import { longSessionRows } from './lib/long-session-rows.mjs';
import { formatTable } from './lib/table.mjs';

const { values: args } = parseArgs({
  options: {
    turns: { type: 'string', default: '500' },
    window: { type: 'string', default: '200000' },
    json: { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const turns = Math.max(1, Math.floor(Number(args.turns)) || 500);
const window = Math.floor(Number(args.window));
if (!Number.isFinite(window) || window < 1024) {
  process.stderr.write(`long-session: --window must be a number of tokens ≥ 1024 (got ${args.window})\n`);
  process.exit(2);
}
const { tk, tmp: benchTmp } = await loadBenchTestkit('long-session', 'swb-long-');
const T0 = performance.now();
const log = (msg) => process.stderr.write(`[long ${((performance.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`);

const HARD_LIMIT_MS = 290_000;
async function cleanup() {
  await tk.stopAllGateways().catch(() => undefined);
  rmSync(benchTmp, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => void cleanup().finally(() => process.exit(130)));
const hardTimer = setTimeout(() => {
  log(`hard limit of ${HARD_LIMIT_MS / 1000}s reached: giving up`);
  void cleanup().finally(() => process.exit(1));
}, HARD_LIMIT_MS);
hardTimer.unref();

let result;
let exitCode = 0;
try {
  result = await runLongSession(tk, { turns, window, deadline: T0 + HARD_LIMIT_MS - 30_000, log });
} catch (err) {
  exitCode = 1;
  log(`FAILED: ${err instanceof Error ? err.stack : err}`);
} finally {
  await cleanup();
  clearTimeout(hardTimer);
}
if (result) {
  if (args.out) {
    mkdirSync(dirname(args.out), { recursive: true });
    writeFileSync(args.out, `${JSON.stringify(result, null, 2)}\n`);
  }
  if (args.json) process.stdout.write(`${JSON.stringify({ ...result, perTurn: undefined })}\n`);
  else {
    process.stdout.write(`${formatTable(longSessionRows(result)).join('\n')}\n`);
    for (const s of result.failureSamples) process.stdout.write(`failure: ${s}\n`);
    if (result.transcriptError) process.stdout.write(`note: compactions from the transcript: n/a (${result.transcriptError})\n`);
  }
}
process.exit(exitCode);
