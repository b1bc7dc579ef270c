// The exec figures of `npm run bench` (issue 14): how long the command checks take per command line,
// and how long a sandboxed run takes to start and stop, with real bubblewrap. In-process, against
// the compiled `@switchboard/tools` (packages/tools/dist); every run is bounded by its timeout.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, round } from './stats.mjs';

/** Targets of the exec figures. */
export const EXEC_TARGETS = { checkMicros: 500, sandboxStartMs: 150 };

const COMMANDS = [
  'ls -la',
  'echo hi && ls',
  'git status && git diff --stat',
  'cat README.md | grep -n foo | head -20',
  'find . -name "*.ts" -not -path "./node_modules/*" | xargs wc -l',
  'npm test -- --run',
  'rm -rf build && mkdir build && cp -r src build/',
  'for f in *.md; do echo "$f"; done',
  "sed -i 's/a/b/' file.txt",
  'echo $(curl -s https://example.com) > out.txt',
  'cd src && ls && cd .. && pwd',
  "python3 -c 'print(1)'",
];

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Measures the checks and the sandbox; `bwrapPath` absent or the sandbox failing skips the sandbox figures. */
export async function runExecBench(root, { iterations = 200, runs = 20, bwrapPath = '/usr/bin/bwrap', log = () => {} } = {}) {
  const tools = await import(pathToFileURL(join(root, 'packages/tools/dist/index.js')).href);
  const exec = await import(pathToFileURL(join(root, 'packages/tools/dist/exec/index.js')).href);
  const dir = mkdtempSync(join(tmpdir(), 'swb-bench-exec-'));
  const workspace = join(dir, 'ws');
  const out = { commands: COMMANDS.length, iterations };
  try {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(workspace);
    const loadStart = performance.now();
    const checks = await exec.loadExecChecks();
    out.grammarLoadMs = round(performance.now() - loadStart, 1);
    const perCommand = [];
    for (const command of COMMANDS) {
      for (let i = 0; i < 20; i++) checks.analyze(command, { workspace, home: workspace });
      const t0 = performance.now();
      for (let i = 0; i < iterations; i++) checks.analyze(command, { workspace, home: workspace });
      perCommand.push(((performance.now() - t0) * 1000) / iterations);
    }
    out.checkMicrosMedian = round(median(perCommand), 1);
    out.checkMicrosMax = round(Math.max(...perCommand), 1);
    log(`exec checks: median ${out.checkMicrosMedian} µs per command line`);

    const isRoot = process.getuid?.() === 0;
    if (isRoot) await tools.grantSandboxGroup(workspace, 64_190);
    const options = {
      bwrapPath,
      workspace,
      path: '/usr/bin:/bin',
      system: await tools.describeSystemLayout(),
      limits: tools.DEFAULT_SANDBOX_LIMITS,
      hostIsRoot: isRoot,
      ...(isRoot ? { uids: new tools.UidAllocator(64_190, 64_193), gid: 64_190 } : {}),
    };
    const probe = await tools.probeSandbox({ ...options, scratchDir: dir, timeoutMs: 10_000 });
    if (!probe.ok) {
      out.sandboxError = `${probe.reason}: ${probe.detail.split('\n')[0]}`;
      return out;
    }
    const starts = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const r = await tools.runSandboxed(options, 'true', { timeoutMs: 10_000 });
      if (r.exitCode !== 0) throw new Error(`sandboxed true exited ${r.exitCode}: ${r.output}`);
      starts.push(performance.now() - t0);
    }
    out.sandboxStartMsMedian = round(median(starts), 1);
    out.sandboxStartMsP95 = round(percentile(starts, 95), 1);
    const t0 = performance.now();
    const big = await tools.runSandboxed({ ...options, outputBudget: 30_000 }, 'seq 1 2000000', { timeoutMs: 30_000 });
    const ms = performance.now() - t0;
    out.outputMBps = round(14.9 / (ms / 1000), 1); // seq 1 2000000 writes 14.9 MB
    out.outputKept = big.output.length;
    log(`exec sandbox: median ${out.sandboxStartMsMedian} ms per run of true; ${out.outputMBps} MB/s of output`);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The table rows of {@link runExecBench}'s result, in `npm run bench`'s row shape. */
export function execRows(r) {
  const rows = [];
  const row = (metric, unit, value, target = null, better = 'lower') => {
    const ok = target === null || typeof value !== 'number' ? null : better === 'lower' ? value <= target : value >= target;
    rows.push({ metric: `exec: ${metric}`, unit, gateway: typeof value === 'number' ? value : null, baseline: null, ratio: null, target, better, ok });
  };
  row('shell grammar load (once per process)', 'ms', r.grammarLoadMs);
  row(`command checks per line (median of ${r.commands})`, 'µs', r.checkMicrosMedian, EXEC_TARGETS.checkMicros);
  row('command checks per line (slowest)', 'µs', r.checkMicrosMax);
  if (r.sandboxError) {
    rows.push({
      metric: `exec: sandbox n/a (${r.sandboxError})`,
      unit: '',
      gateway: null,
      baseline: null,
      ratio: null,
      target: null,
      better: 'lower',
      ok: null,
    });
    return rows;
  }
  row('sandboxed `true`, spawn to reaped (median)', 'ms', r.sandboxStartMsMedian, EXEC_TARGETS.sandboxStartMs);
  row('sandboxed `true`, spawn to reaped (p95)', 'ms', r.sandboxStartMsP95);
  row('sandboxed output throughput (seq, cut to 30k chars)', 'MB/s', r.outputMBps, null, 'higher');
  return rows;
}
