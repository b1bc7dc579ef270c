#!/usr/bin/env node
// `npm test`: every step runs, even when an earlier one failed; the exit code is non-zero if any
// step failed. Arguments after `npm test --` go to vitest (e.g. `npm test -- --maxWorkers=1`).
//
// Steps: lint (Biome: format and lint rules, biome.json; then scripts/check-deps.mjs); vitest (which builds first, see
// scripts/vitest-global-setup.ts); the secret-leak canary scan of the run log; the no-egress record
// (any connection the test guard refused).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const node = process.execPath;

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.error) process.stderr.write(`run-tests: ${r.error.message}\n`);
  return r.status === 0;
}

function egressRecord() {
  const file = process.env.SWITCHBOARD_EGRESS_LOG || join(root, 'test-results', 'egress-refused');
  if (!existsSync(file)) {
    process.stdout.write('no-egress: ok — no test tried to reach beyond loopback\n');
    return true;
  }
  process.stderr.write(`no-egress: FAILED — connections the guard refused (${file}):\n${readFileSync(file, 'utf8')}`);
  return false;
}

const steps = [
  [
    'lint',
    () => {
      // `npm run lint`: Biome, then the dependency check (both run; either failing fails the step).
      const biome = run(node, [join(root, 'node_modules/@biomejs/biome/bin/biome'), 'check', '.']);
      const deps = run(node, [join(root, 'scripts/check-deps.mjs')]);
      return biome && deps;
    },
  ],
  ['vitest', () => run(node, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', ...process.argv.slice(2)])],
  ['canary scan', () => run(node, [join(root, 'packages/testkit/dist/canary-scan-cli.js')])],
  ['no-egress record', egressRecord],
];

const failed = [];
for (const [name, step] of steps) {
  process.stdout.write(`\n=== ${name} ===\n`);
  let ok = false;
  try {
    ok = step();
  } catch (err) {
    process.stderr.write(`run-tests: ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  if (!ok) failed.push(name);
}
process.stdout.write(`\n=== ${failed.length === 0 ? 'all steps passed' : `FAILED: ${failed.join(', ')}`} (${steps.map(([n]) => n).join(', ')}) ===\n`);
process.exitCode = failed.length === 0 ? 0 : 1;
