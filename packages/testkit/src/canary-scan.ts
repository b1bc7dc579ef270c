import { existsSync, readFileSync } from 'node:fs';
import { CANARIES_BY_NAME } from './canaries.js';
import { canarySeenPath, runLogPath } from './run-log.js';

/** One log line that contains a secret; carries the secret's name, never its value. */
export interface CanaryHit {
  file: string;
  /** 1-based line number. */
  line: number;
  name: string;
}

/** What to scan. Every field falls back to the run-log defaults. */
export interface CanaryScanOptions {
  /** Log files to scan (default: `[runLogPath()]`). */
  logPaths?: string[];
  /** The marker proving the planted key reached the fake model API (default: `canarySeenPath()`). */
  seenPath?: string;
  /** Further secret values to look for; reported as `extra#1`, `extra#2`, … */
  extra?: string[];
  /** The named secrets (default: every canary in `canaries.ts`). */
  canaries?: Readonly<Record<string, string>>;
}

/** The outcome of a scan; `ok` is true only with no hits, every log readable and the marker present. */
export interface CanaryScanResult {
  ok: boolean;
  hits: CanaryHit[];
  /** Human-readable reasons for failure (no secret values). */
  problems: string[];
  logPaths: string[];
  seenPath: string;
  /** Non-empty lines in the marker file (0 when missing). */
  seenCount: number;
  linesScanned: number;
  secretsChecked: number;
}

/** Scans the logs for every secret and checks the canary marker. Never throws for missing files. */
export function scanForCanaries(opts: CanaryScanOptions = {}): CanaryScanResult {
  const logPaths = opts.logPaths && opts.logPaths.length > 0 ? opts.logPaths : [runLogPath()];
  const seenPath = opts.seenPath ?? canarySeenPath();
  const secrets: Array<[string, string]> = Object.entries(opts.canaries ?? CANARIES_BY_NAME);
  (opts.extra ?? []).forEach((value, i) => {
    if (value !== '') secrets.push([`extra#${i + 1}`, value]);
  });
  const hits: CanaryHit[] = [];
  const problems: string[] = [];
  let linesScanned = 0;
  for (const file of logPaths) {
    if (!existsSync(file)) {
      problems.push(`run log ${file} does not exist (nothing was captured, so nothing was checked)`);
      continue;
    }
    const lines = readFileSync(file, 'utf8').split('\n');
    lines.forEach((text, i) => {
      if (text === '') return;
      linesScanned++;
      for (const [name, value] of secrets) {
        if (text.includes(value)) hits.push({ file, line: i + 1, name });
      }
    });
  }
  const byKey = new Map<string, number[]>();
  for (const hit of hits) {
    const key = `${hit.name}\u0000${hit.file}`;
    const list = byKey.get(key) ?? [];
    list.push(hit.line);
    byKey.set(key, list);
  }
  for (const [key, lines] of byKey) {
    const [name, file] = key.split('\u0000') as [string, string];
    const shown = lines.slice(0, 20).join(', ') + (lines.length > 20 ? `, … (${lines.length} lines)` : '');
    problems.push(`secret ${name} leaked into ${file} at line${lines.length > 1 ? 's' : ''} ${shown}`);
  }
  let seenCount = 0;
  if (existsSync(seenPath)) {
    seenCount = readFileSync(seenPath, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '').length;
  }
  if (seenCount === 0) {
    problems.push(
      `canary marker ${seenPath} is missing or empty: the fake Anthropic API never received ` +
        'CANARY_ANTHROPIC_KEY, so the gateway did not load the planted key and a clean log proves nothing',
    );
  }
  return {
    ok: problems.length === 0,
    hits,
    problems,
    logPaths,
    seenPath,
    seenCount,
    linesScanned,
    secretsChecked: secrets.length,
  };
}

/** Output sinks for `runCanaryScanCli` (default: the process's stdout/stderr). */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

const USAGE = 'usage: canary-scan-cli [--log <path>]... [--seen <path>] [--extra <value>]...';

/**
 * The CLI: `[--log <path>]... [--seen <path>] [--extra <value>]...`. Returns the exit code
 * (0 clean, 1 leak or missing marker, 2 bad usage). Prints secret names, never values.
 */
export function runCanaryScanCli(argv: string[], io?: CliIo): number {
  const out = io?.out ?? ((l: string) => process.stdout.write(`${l}\n`));
  const err = io?.err ?? ((l: string) => process.stderr.write(`${l}\n`));
  const logPaths: string[] = [];
  const extra: string[] = [];
  let seenPath: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--help' || flag === '-h') {
      out(USAGE);
      return 0;
    }
    if ((flag === '--log' || flag === '--seen' || flag === '--extra') && value !== undefined) {
      if (flag === '--log') logPaths.push(value);
      else if (flag === '--seen') seenPath = value;
      else extra.push(value);
      i++;
      continue;
    }
    err(`canary-scan: unknown or incomplete argument ${JSON.stringify(flag)}\n${USAGE}`);
    return 2;
  }
  const result = scanForCanaries({ logPaths, extra, ...(seenPath !== undefined ? { seenPath } : {}) });
  if (!result.ok) {
    err(`canary-scan: FAILED (${result.problems.length} problem${result.problems.length > 1 ? 's' : ''})`);
    for (const p of result.problems) err(`  - ${p}`);
    return 1;
  }
  out(
    `canary-scan: ok — ${result.secretsChecked} secrets, ${result.linesScanned} lines in ` +
      `${result.logPaths.join(', ')} clean; planted key seen by the fake model API ${result.seenCount} time(s)`,
  );
  return 0;
}
