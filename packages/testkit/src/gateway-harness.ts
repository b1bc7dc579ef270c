import { spawn, type ChildProcess } from 'node:child_process';
import { watch, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ChildOutput, type LineMatcher } from './child-output.js';
import { deepMerge } from './deep-merge.js';
import { buildTestConfig, type GatewayConfig } from './gateway-config.js';
import { noEgressGuardInstalled, noEgressNodeOptions } from './no-egress.js';
import { canarySeenPath, repoRoot, runLogPath } from './run-log.js';

/** Options for `startGateway`. */
export interface StartGatewayOptions {
  /** Deep-merged over the base test config (`baseTestConfig`). */
  config?: Record<string, unknown>;
  /** Extra environment for the child (on top of a copy of this process's env, minus ANTHROPIC_* and NODE_OPTIONS). */
  env?: Record<string, string>;
  /** The gateway's data directory (default: a fresh temp directory). */
  dataDir?: string;
  /** The fake model API's URL (`fake.url`), written as `model.baseUrl`. */
  modelUrl?: string;
  /** Fail if the endpoint file has not appeared within this time (default 30 000 ms). */
  startTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL (default 10 000 ms). */
  stopTimeoutMs?: number;
  /** The CLI to run instead of `gatewayCliPath()` (for checking the harness itself). */
  cliPath?: string;
  /**
   * The config's `storage` section (e.g. `{ kind: 'postgres', url }`); default: what the provider
   * set with {@link setGatewayStorage} returns (a fresh database per gateway), else SQLite.
   */
  storage?: Record<string, unknown>;
}

let storageProvider: (() => Promise<Record<string, unknown>>) | null = null;

/**
 * Makes every later `startGateway` without its own `storage` (option or `config.storage`) run on
 * the `storage` section `provider` returns — called once per gateway, so each can get a database of
 * its own (test/postgres runs e2e files on PostgreSQL this way). `null`: back to SQLite.
 */
export function setGatewayStorage(provider: (() => Promise<Record<string, unknown>>) | null): void {
  storageProvider = provider;
}

/** How a process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The `<dataDir>/endpoint` file the gateway writes once listening. */
export interface GatewayEndpoint {
  url: string;
  host: string;
  port: number;
  pid: number;
}

/** The `<dataDir>/credentials.json` file the gateway writes on first start. */
export interface GatewayCredentials {
  principal: string;
  principalId: string;
  clientToken: string;
  operatorToken: string;
}

/** A running gateway child process. */
export interface GatewayProcess {
  readonly pid: number;
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** `ws://127.0.0.1:PORT/ws`. */
  readonly wsUrl: string;
  readonly port: number;
  readonly dataDir: string;
  readonly configPath: string;
  /** The config as written to `configPath`. */
  readonly config: GatewayConfig;
  /** The environment overrides this gateway was started with. */
  readonly env: Record<string, string>;
  readonly child: ChildProcess;
  /** Settles when the process has exited and its output is fully read. */
  readonly exited: Promise<ExitInfo>;
  /** Every stdout/stderr line so far. */
  logs(): string[];
  /** The first line (so far from line index `from` on, or later) matching; rejects on timeout (default 10 000 ms) or exit. */
  waitForLog(match: LineMatcher, timeoutMs?: number, from?: number): Promise<string>;
  /** Reads `<dataDir>/credentials.json`. */
  credentials(): GatewayCredentials;
  /** Sends `signal` (default SIGKILL) and resolves on exit. */
  kill(signal?: NodeJS.Signals): Promise<ExitInfo>;
  /** SIGTERM, then SIGKILL after `timeoutMs` (default: the `stopTimeoutMs` option); resolves on exit. */
  stop(timeoutMs?: number): Promise<ExitInfo>;
  /**
   * Stops this process if still running (SIGTERM) and starts a new one on the same data dir and
   * config; `config` is deep-merged over the current config, `env` over the current env.
   */
  restart(overrides?: { config?: Record<string, unknown>; env?: Record<string, string> }): Promise<GatewayProcess>;
}

const live = new Set<ChildProcess>();
const tempRoots = new Set<string>();
let exitHookInstalled = false;
let configSeq = 0;

/** `<repo>/apps/gateway/dist/cli.js`. */
export function gatewayCliPath(): string {
  return join(repoRoot(), 'apps', 'gateway', 'dist', 'cli.js');
}

/**
 * The child environment: this process's env minus model credentials and NODE_OPTIONS, plus
 * run-log paths; when this process runs under the no-egress guard (tests), the child loads it too.
 */
export function gatewayChildEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('ANTHROPIC_') && k !== 'NODE_OPTIONS') env[k] = v;
  }
  env.SWITCHBOARD_RUN_LOG = runLogPath();
  env.SWITCHBOARD_CANARY_SEEN = canarySeenPath();
  if (noEgressGuardInstalled()) env.NODE_OPTIONS = noEgressNodeOptions();
  return { ...env, ...extra };
}

/** Registers a child so `stopAllGateways` (and process exit) can kill it. */
export function trackChild(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
}

/**
 * SIGKILLs every gateway/CLI child still running, waits for them to exit, then deletes the temp
 * directories the harness created (never a caller-given `dataDir`) unless `keepDirs`. For `afterAll`.
 */
export async function stopAllGateways(opts: { keepDirs?: boolean } = {}): Promise<void> {
  await Promise.all(
    [...live].map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGKILL');
        }),
    ),
  );
  if (opts.keepDirs) return;
  for (const dir of tempRoots) rmSync(dir, { recursive: true, force: true });
  tempRoots.clear();
}

function writeConfig(dir: string, config: GatewayConfig): string {
  const path = join(dir, `config-${process.pid}-${++configSeq}.json5`);
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return path;
}

function readEndpoint(dataDir: string, pid: number): GatewayEndpoint | undefined {
  try {
    const ep = JSON.parse(readFileSync(join(dataDir, 'endpoint'), 'utf8')) as Partial<GatewayEndpoint>;
    if (ep.pid === pid && typeof ep.port === 'number' && typeof ep.url === 'string') return ep as GatewayEndpoint;
  } catch {
    // not written yet, or half-written
  }
  return undefined;
}

/** Waits for `<dataDir>/endpoint` with this pid; prompted by the listening line, fs.watch and a slow re-check. */
function waitForEndpoint(child: ChildProcess, dataDir: string, out: ChildOutput, exited: Promise<ExitInfo>, timeoutMs: number): Promise<GatewayEndpoint> {
  const pid = child.pid as number;
  return new Promise<GatewayEndpoint>((resolve, reject) => {
    let watcher: FSWatcher | undefined;
    let settled = false;
    const finish = (err: Error | undefined, ep?: GatewayEndpoint) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(recheck);
      off();
      watcher?.close();
      if (err) {
        child.kill('SIGKILL');
        reject(err);
      } else resolve(ep as GatewayEndpoint);
    };
    const check = () => {
      const ep = readEndpoint(dataDir, pid);
      if (ep) finish(undefined, ep);
    };
    const off = out.onLine((line) => {
      if (line.includes('"listening"')) check();
    });
    try {
      watcher = watch(dataDir, (_ev, name) => {
        if (!name || String(name) === 'endpoint') check();
      });
      watcher.on('error', () => undefined);
    } catch {
      // fs.watch unsupported here: the interval re-check still works
    }
    // a safety net for missed watch events, not a wait for an event the harness could observe
    const recheck = setInterval(check, 250);
    const timer = setTimeout(() => finish(new Error(`gateway pid ${pid} not ready within ${timeoutMs} ms\n${out.tail()}`)), timeoutMs);
    void exited.then((info) => finish(new Error(`gateway pid ${pid} exited (code ${info.code}, signal ${info.signal}) before it was ready\n${out.tail()}`)));
    check();
  });
}

interface SpawnSpec {
  config: GatewayConfig;
  configPath: string;
  dataDir: string;
  env: Record<string, string>;
  opts: StartGatewayOptions;
}

async function spawnGateway(spec: SpawnSpec): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [spec.opts.cliPath ?? gatewayCliPath(), 'start', '--config', spec.configPath], {
    cwd: repoRoot(),
    env: gatewayChildEnv(spec.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) {
    const err = await new Promise<Error>((resolve) => child.once('error', resolve));
    throw new Error(`could not spawn the gateway: ${err.message}`);
  }
  trackChild(child);
  const pid = child.pid;
  const out = new ChildOutput(child, `gateway:${pid}`);
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => void out.ended.then(() => resolve({ code, signal })));
  });
  const ep = await waitForEndpoint(child, spec.dataDir, out, exited, spec.opts.startTimeoutMs ?? 30_000);
  const stopTimeoutMs = spec.opts.stopTimeoutMs ?? 10_000;
  const running = () => child.exitCode === null && child.signalCode === null;
  const gw: GatewayProcess = {
    pid,
    url: ep.url.replace(/\/$/, ''),
    wsUrl: `${ep.url.replace(/\/$/, '').replace(/^http/, 'ws')}/ws`,
    port: ep.port,
    dataDir: spec.dataDir,
    configPath: spec.configPath,
    config: spec.config,
    env: spec.env,
    child,
    exited,
    logs: () => [...out.lines],
    waitForLog: (match, timeoutMs = 10_000, from = 0) => out.waitForLine(match, timeoutMs, exited, `gateway pid ${pid}`, from),
    credentials: () => JSON.parse(readFileSync(join(spec.dataDir, 'credentials.json'), 'utf8')) as GatewayCredentials,
    kill: (signal = 'SIGKILL') => {
      if (running()) child.kill(signal);
      return exited;
    },
    stop: async (timeoutMs = stopTimeoutMs) => {
      if (running()) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const info = await exited;
      clearTimeout(timer);
      return info;
    },
    restart: async (overrides = {}) => {
      await gw.stop();
      const config = overrides.config ? deepMerge(spec.config, overrides.config) : spec.config;
      const configPath = overrides.config ? writeConfig(join(spec.configPath, '..'), config) : spec.configPath;
      return spawnGateway({ ...spec, config, configPath, env: { ...spec.env, ...(overrides.env ?? {}) } });
    },
  };
  return gw;
}

/**
 * Spawns the real compiled gateway (`node apps/gateway/dist/cli.js start --config <file>`) with
 * the base test config merged with `opts.config`, and resolves once it has written
 * `<dataDir>/endpoint` for its pid. Rejects with the collected output if it exits first.
 */
export async function startGateway(opts: StartGatewayOptions = {}): Promise<GatewayProcess> {
  const root = mkdtempSync(join(tmpdir(), 'swb-gw-'));
  tempRoots.add(root);
  const requestedDir = opts.dataDir ?? join(root, 'data');
  const storage = opts.storage ?? (opts.config?.storage === undefined && storageProvider ? await storageProvider() : undefined);
  const config = buildTestConfig(requestedDir, opts.modelUrl, storage ? deepMerge(opts.config ?? {}, { storage }) : opts.config);
  const gatewaySection = config.gateway as { dataDir?: unknown; replicaId?: unknown } | undefined;
  // On PostgreSQL a gateway keeps one replica id across its restarts (as a deployed replica with a
  // stable `gateway.replicaId` does), so a restart after a crash takes its sessions' leases back at once.
  if ((config.storage as { kind?: unknown } | undefined)?.kind === 'postgres' && gatewaySection && gatewaySection.replicaId === undefined) {
    gatewaySection.replicaId = `gw-${basename(root)}`;
  }
  const dataDir = typeof gatewaySection?.dataDir === 'string' ? gatewaySection.dataDir : requestedDir;
  mkdirSync(dataDir, { recursive: true });
  const configPath = writeConfig(root, config);
  return spawnGateway({ config, configPath, dataDir, env: opts.env ?? {}, opts });
}
