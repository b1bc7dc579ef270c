import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Builds the compiled packages the end-to-end tests spawn, and starts a fresh run log. */
export default function setup(): void {
  // SWITCHBOARD_SKIP_BUILD=1 runs against the dist already built (e.g. while another package is mid-edit).
  if (process.env.SWITCHBOARD_SKIP_BUILD !== '1')
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: root, stdio: 'inherit' });
  const results = join(root, 'test-results');
  mkdirSync(results, { recursive: true });
  const log = process.env.SWITCHBOARD_RUN_LOG ?? join(results, 'run.log');
  writeFileSync(log, '');
  rmSync(join(results, 'canary-key-seen'), { force: true });
  rmSync(process.env.SWITCHBOARD_EGRESS_LOG || join(results, 'egress-refused'), { force: true });
}
