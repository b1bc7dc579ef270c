import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import JSON5 from 'json5';
import { ConfigError, interpolate } from './config.js';
import { endpointUrl } from './cli-admin.js';
import { probeInstanceLock } from './instance-lock.js';

/**
 * The data dir a config names, read without validating the rest of the config: commands that only
 * read or change the database (`principals`, `token list`, `backup`) must work without every
 * channel's secret variables set. Same rules as `loadConfig`: `gateway.dataDir` (with `${VAR}`
 * expanded), overridden by `SWITCHBOARD_DATA_DIR`, relative to `cwd`, default `./data`.
 */
export function dataDirOf(file: string, env: NodeJS.ProcessEnv, cwd: string): string {
  let raw: unknown;
  try {
    raw = JSON5.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(code ? `cannot read the config file ${file}: ${code}` : `the config is not valid JSON5: ${(err as Error).message}`);
  }
  const gw = raw && typeof raw === 'object' && !Array.isArray(raw) && Object.hasOwn(raw, 'gateway') ? (raw as { gateway: unknown }).gateway : undefined;
  const fromFile =
    gw && typeof gw === 'object' && Object.hasOwn(gw, 'dataDir') ? interpolate((gw as { dataDir: unknown }).dataDir, env, ['gateway', 'dataDir']) : undefined;
  if (fromFile !== undefined && (typeof fromFile !== 'string' || fromFile === '')) throw new ConfigError('gateway.dataDir: expected a non-empty string');
  const dir = env.SWITCHBOARD_DATA_DIR || (fromFile as string | undefined) || './data';
  return isAbsolute(dir) ? dir : resolve(cwd, dir);
}

/** What `runningGateway` found. */
export interface RunningGateway {
  running: boolean;
  /** The control API's base URL, once the running gateway listens. */
  url?: string;
}

/**
 * Whether a gateway runs on this data dir: it holds the data dir's instance lock (the kernel
 * drops it when the process dies, so a crashed gateway never looks alive). `url` is its control
 * API, from `<dataDir>/endpoint`, once it listens. The single place the CLI decides "through the
 * API or the database directly": a locked data dir is never written directly.
 */
export async function runningGateway(dataDir: string): Promise<RunningGateway> {
  const probe = probeInstanceLock(dataDir);
  if (!probe.running) return { running: false };
  const url = endpointUrl(dataDir);
  return url ? { running: true, url } : { running: true };
}

/** A control-API answer: the status and the parsed body (or a message). */
export interface ApiAnswer<T = unknown> {
  ok: boolean;
  status: number;
  /** The parsed body, as the caller expects this endpoint to answer (not checked; undefined when it is not JSON). */
  json: T;
  /** The body as it came. */
  text: string;
  message: string;
}

/** One control-API request with an operator token; a network failure is status 0. */
export async function apiRequest<T = unknown>(base: string, token: string, method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
  let res: Response;
  try {
    res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    return {
      ok: false,
      status: 0,
      json: undefined as T,
      text: '',
      message: `the gateway at ${base} did not answer (${(err as Error).message}); is it running?`,
    };
  }
  const text = await res.text();
  let json: T;
  try {
    json = text === '' ? (undefined as T) : (JSON.parse(text) as T);
  } catch {
    json = undefined as T;
  }
  const said = (json as { message?: unknown } | null | undefined)?.message;
  const message = res.ok ? '' : `${res.status}: ${typeof said === 'string' ? said : text}`;
  return { ok: res.ok, status: res.status, json, text, message };
}
