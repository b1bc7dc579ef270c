#!/usr/bin/env node
// The replicas load alone (issue 20): 1 gateway on SQLite vs 1, 2, 3 replicas on PostgreSQL at
// 32 sessions. `npm run bench` runs it too; see bench/README.md.
//
//   node bench/replicas.mjs [--turns N] [--json]
import { parseArgs } from 'node:util';
import { loadBenchTestkit } from './lib/common.mjs';
import { replicasRows, runReplicasBench } from './lib/replicas.mjs';
import { formatTable } from './lib/table.mjs';

const { values: args } = parseArgs({ options: { turns: { type: 'string', default: '1600' }, json: { type: 'boolean', default: false } } });
const turns = Number(args.turns);
if (!Number.isInteger(turns) || turns < 32) {
  process.stderr.write(`bench/replicas: --turns must be a whole number ≥ 32 (got ${args.turns})\n`);
  process.exit(2);
}
const { tk } = await loadBenchTestkit('bench/replicas', 'swb-bench-replicas-');
const fake = await tk.startFakeAnthropic();
let code = 0;
try {
  const r = await runReplicasBench(tk, { modelUrl: fake.url, turns, log: (m) => process.stderr.write(`[bench] ${m}\n`) });
  if (args.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  else process.stdout.write(`${formatTable(replicasRows(r)).join('\n')}\n`);
} catch (err) {
  code = 1;
  process.stderr.write(`bench/replicas FAILED: ${err instanceof Error ? err.stack : err}\n`);
} finally {
  await tk.stopAllGateways();
  await fake.close();
}
process.exit(code);
