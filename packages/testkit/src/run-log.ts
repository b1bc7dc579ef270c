import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repository root, resolved from this module's location: both
 * `packages/testkit/dist/run-log.js` and `packages/testkit/src/run-log.ts` sit three levels below it.
 */
export function repoRoot(): string {
  return fileURLToPath(new URL('../../..', import.meta.url)).replace(/[\\/]$/, '');
}

/** `<repo>/test-results`, where the run log and the canary marker live by default. */
export function testResultsDir(): string {
  return join(repoRoot(), 'test-results');
}

/** The shared run log: env `SWITCHBOARD_RUN_LOG`, else `<repo>/test-results/run.log`. */
export function runLogPath(): string {
  const fromEnv = process.env.SWITCHBOARD_RUN_LOG;
  return fromEnv && fromEnv.trim() !== '' ? fromEnv : join(testResultsDir(), 'run.log');
}

/**
 * The canary marker file the fake Anthropic appends to when it receives the planted key:
 * env `SWITCHBOARD_CANARY_SEEN`, else `<repo>/test-results/canary-key-seen`.
 */
export function canarySeenPath(): string {
  const fromEnv = process.env.SWITCHBOARD_CANARY_SEEN;
  return fromEnv && fromEnv.trim() !== '' ? fromEnv : join(testResultsDir(), 'canary-key-seen');
}

const madeDirs = new Set<string>();

/** Appends to `file`, creating its directory once; O_APPEND keeps lines from several processes whole. */
export function appendLine(file: string, text: string): void {
  const dir = dirname(file);
  if (!madeDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    madeDirs.add(dir);
  }
  appendFileSync(file, text);
}

/**
 * Appends `[source] line\n` to the run log (synchronously, append mode, so several worker
 * processes can share the file). Embedded newlines are escaped so one call is one line.
 * Never scrubs: the canary scan relies on seeing exactly what was written.
 */
export function appendRunLog(source: string, line: string): void {
  const flat = line.replace(/\r?\n/g, '\\n');
  appendLine(runLogPath(), `[${source}] ${flat}\n`);
}
