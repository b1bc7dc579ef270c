import { spawn } from 'node:child_process';
import { ChildOutput } from './child-output.js';
import { gatewayChildEnv, gatewayCliPath, trackChild } from './gateway-harness.js';
import { repoRoot } from './run-log.js';

/** Options for `runCli`. */
export interface RunCliOptions {
  /** Use this gateway's config file and env (`--config` is appended unless `args` has one). */
  gateway?: { configPath: string; env?: Record<string, string> };
  /** A config file to pass instead of the gateway's. */
  configPath?: string;
  env?: Record<string, string>;
  /** Written to the child's stdin, which is then closed. */
  input?: string;
  /** SIGKILL the CLI after this long (default 30 000 ms). */
  timeoutMs?: number;
  /** The CLI to run instead of `gatewayCliPath()`. */
  cliPath?: string;
}

/** The outcome of a CLI run. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node apps/gateway/dist/cli.js ...args [--config <file>]`; output is also copied to the run log. */
export async function runCli(args: string[], opts: RunCliOptions = {}): Promise<CliResult> {
  const configPath = opts.configPath ?? opts.gateway?.configPath;
  const full = configPath !== undefined && !args.includes('--config') ? [...args, '--config', configPath] : args;
  const child = spawn(process.execPath, [opts.cliPath ?? gatewayCliPath(), ...full], {
    cwd: repoRoot(),
    env: gatewayChildEnv({ ...(opts.gateway?.env ?? {}), ...(opts.env ?? {}) }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  trackChild(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const out = new ChildOutput(child, `cli:${child.pid ?? 'unspawned'}`);
  child.stdin.on('error', () => undefined);
  child.stdin.end(opts.input ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
  const info = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(timer);
  await out.ended;
  return { ...info, stdout, stderr };
}

/** The answer of `api()`: status, headers, the body as text, and parsed when it is JSON. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: loosely typed on purpose: tests read nested fields of recorded JSON without casts
  json: any;
  text: string;
}

/** A small fetch helper for the control API; `token` becomes `Authorization: Bearer <token>`. */
export async function api(
  gw: { url: string },
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers,
    ...(opts.body !== undefined ? { body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) } : {}),
  });
  return { status: res.status, headers: res.headers, ...(await readResponse(res)) };
}

/** A response's body as text, and as JSON when it parses (undefined otherwise). */
export async function readResponse(res: Response): Promise<{ text: string; json: ApiResponse['json'] }> {
  const text = await res.text();
  try {
    return { text, json: text === '' ? undefined : JSON.parse(text) };
  } catch {
    return { text, json: undefined };
  }
}
