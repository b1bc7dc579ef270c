import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LineMatcher, toLinePredicate } from './child-output.js';
import { deepMerge } from './deep-merge.js';
import { type ExitInfo, type GatewayCredentials, type GatewayProcess, startGateway } from './gateway-harness.js';
import { type RoundRobinProxy, startRoundRobinProxy } from './round-robin-proxy.js';

/** Options for {@link startReplicas}. */
export interface StartReplicasOptions {
  /** How many gateway processes (at least 1). */
  count: number;
  /** The PostgreSQL database every replica shares: its URL (e.g. from `PgServer.createDatabase()`). */
  pg: string;
  /** Deep-merged over the base test config for every replica (as `startGateway`'s `config`). */
  config?: Record<string, unknown>;
  /** Deep-merged over `config` for replica `index` only (another channel account, a different log level). */
  configFor?: (index: number) => Record<string, unknown> | undefined;
  /** The fake model API's URL, written as `model.baseUrl`. */
  modelUrl?: string;
  /** Extra environment for every replica. */
  env?: Record<string, string>;
  /** How long `stop()` waits after SIGTERM before SIGKILL (default 20 000 ms: a graceful handoff may drain turns). */
  stopTimeoutMs?: number;
  /**
   * Whether a start waits until the replica has joined (logged taking its presence lease), not only
   * until it listens (default true). Needs info-level logs: a load that turns them off passes false.
   */
  awaitJoined?: boolean;
}

/** Matches the log line of a replica taking `lease` (`receiver:telegram:main`, `replica:<id>`, …). */
export const leaseAcquired =
  (lease: string) =>
  (line: string): boolean =>
    line.includes('"event":"lease_acquired"') && line.includes(`"lease":"${lease}"`);

/** How many log lines each replica process had at a moment ({@link Replicas.mark}). */
export type LogMark = ReadonlyMap<GatewayProcess, number>;

/** A replica's answer on `/readyz` (with the operator token, so with details). */
export interface ReplicaReadyz {
  status: number;
  body: Record<string, unknown>;
}

/** N gateway processes on one PostgreSQL database behind a loopback round-robin proxy. */
export interface Replicas {
  /** The proxy in front of the replicas (HTTP and WebSocket). */
  readonly proxy: RoundRobinProxy;
  /** The proxy's `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The proxy's `ws://127.0.0.1:PORT/ws`. */
  readonly wsUrl: string;
  /** The shared `workspaces.root` (a shared volume in a real deployment). */
  readonly workspacesRoot: string;
  /** How many replicas there are (running or not). */
  readonly count: number;
  /** Replica `index`'s current process (the newest start; it may have exited). */
  at(index: number): GatewayProcess;
  /** Every replica's current process, by index. */
  all(): GatewayProcess[];
  /** Whether replica `index`'s current process is still running. */
  running(index: number): boolean;
  /** The replica id replica `index`'s current process runs as (`gateway.replicaId`: `replica-<index>-<start>`). */
  replicaId(index: number): string;
  /** The owner's tokens, written by the first replica (tokens live in the shared database: valid on every replica). */
  credentials(): GatewayCredentials;
  /** Sends `signal` (default SIGKILL: a crash) to replica `index` and resolves when it exited; the proxy skips it from then on. */
  kill(index: number, signal?: NodeJS.Signals): Promise<ExitInfo>;
  /** SIGTERM (a graceful handoff), SIGKILL after the stop timeout; resolves on exit. */
  stop(index: number): Promise<ExitInfo>;
  /**
   * Stops replica `index` if it still runs (SIGTERM) and starts a new process on the same data dir
   * under a new replica id; `config` is deep-merged over its config. The proxy routes to it once it listens.
   */
  restart(index: number, overrides?: { config?: Record<string, unknown> }): Promise<GatewayProcess>;
  /** Where each running replica's log is now: pass it as `since` to wait only for later lines. */
  mark(): LogMark;
  /**
   * The first log line matching `match` on any replica running now (after `since`, if given);
   * resolves with the replica's index. Rejects on timeout (default 20 000 ms) or when every one exited.
   */
  waitForLog(match: LineMatcher, opts?: { timeoutMs?: number; since?: LogMark }): Promise<{ index: number; line: string }>;
  /** `/readyz` of replica `index` with the owner's operator token. */
  readyz(index: number): Promise<ReplicaReadyz>;
  /** Kills every replica (SIGKILL), closes the proxy and deletes the shared workspaces root. */
  close(): Promise<void>;
}

/**
 * Starts `count` real gateway processes on one PostgreSQL database (`storage.kind: postgres`),
 * each with its own data dir and instance lock, all sharing one `workspaces.root`, and a
 * round-robin TCP proxy in front. The first replica starts alone (it migrates the database and
 * creates the owner and their tokens), then the others start together.
 */
export async function startReplicas(opts: StartReplicasOptions): Promise<Replicas> {
  if (!Number.isInteger(opts.count) || opts.count < 1) throw new Error(`startReplicas: count must be a positive integer, got ${opts.count}`);
  const root = mkdtempSync(join(tmpdir(), 'swb-replicas-'));
  const workspacesRoot = join(root, 'workspaces');
  mkdirSync(workspacesRoot, { recursive: true });
  const shared = deepMerge(opts.config ?? {}, { storage: { kind: 'postgres', url: opts.pg }, workspaces: { root: workspacesRoot } });
  const starts: number[] = Array.from({ length: opts.count }, () => 0);
  const procs: GatewayProcess[] = [];
  const proxy = await startRoundRobinProxy(Array.from({ length: opts.count }, () => null));

  const idOf = (index: number) => `replica-${index}-${starts[index]}`;
  const launch = async (index: number, extra?: Record<string, unknown>): Promise<GatewayProcess> => {
    starts[index] = (starts[index] ?? 0) + 1;
    const own = deepMerge(deepMerge(shared, opts.configFor?.(index) ?? {}), extra ?? {});
    const config = deepMerge(own, { gateway: { replicaId: idOf(index), dataDir: join(root, `replica-${index}`, 'data') } });
    const gw = await startGateway({
      config,
      env: opts.env ?? {},
      stopTimeoutMs: opts.stopTimeoutMs ?? 20_000,
      ...(opts.modelUrl ? { modelUrl: opts.modelUrl } : {}),
    });
    procs[index] = gw;
    // Listening comes before the replica joins (its presence lease is taken after start-up's
    // resume): a replica counts as started once it is listed among the replicas.
    if (opts.awaitJoined !== false) await gw.waitForLog(leaseAcquired(`replica:${idOf(index)}`), 20_000, 0);
    proxy.setBackend(index, { host: '127.0.0.1', port: gw.port });
    void gw.exited.then(() => {
      if (procs[index] === gw) proxy.setBackend(index, null);
    });
    return gw;
  };

  const at = (index: number): GatewayProcess => {
    const gw = procs[index];
    if (!gw) throw new Error(`no replica ${index} (there are ${opts.count})`);
    return gw;
  };
  const running = (index: number) => {
    const c = at(index).child;
    return c.exitCode === null && c.signalCode === null;
  };
  const overrides: Array<Record<string, unknown> | undefined> = [];

  try {
    await launch(0);
    await Promise.all(Array.from({ length: opts.count - 1 }, (_, i) => launch(i + 1)));
  } catch (err) {
    for (const gw of procs) if (gw) await gw.kill();
    await proxy.close();
    rmSync(root, { recursive: true, force: true });
    throw err;
  }

  return {
    proxy,
    url: proxy.url,
    wsUrl: proxy.wsUrl,
    workspacesRoot,
    count: opts.count,
    at,
    all: () => [...procs],
    running,
    replicaId: idOf,
    credentials: () => at(0).credentials(),
    kill: async (index, signal = 'SIGKILL') => {
      const gw = at(index);
      proxy.setBackend(index, null);
      return gw.kill(signal);
    },
    stop: async (index) => {
      const gw = at(index);
      proxy.setBackend(index, null);
      return gw.stop();
    },
    restart: async (index, o = {}) => {
      const gw = at(index);
      proxy.setBackend(index, null);
      await gw.stop();
      if (o.config) overrides[index] = deepMerge(overrides[index] ?? {}, o.config);
      return launch(index, overrides[index]);
    },
    mark: () => new Map(procs.map((gw) => [gw, gw.logs().length])),
    waitForLog: (match, o = {}) => {
      const pred = toLinePredicate(match);
      const timeoutMs = o.timeoutMs ?? 20_000;
      const live = procs.map((gw, index) => ({ gw, index })).filter(({ index }) => running(index));
      if (live.length === 0) return Promise.reject(new Error('waitForLog: no replica is running'));
      return new Promise((resolve, reject) => {
        let failed = 0;
        const errors: string[] = [];
        for (const { gw, index } of live) {
          gw.waitForLog(pred, timeoutMs, o.since?.get(gw) ?? 0).then(
            (line) => resolve({ index, line }),
            (err: unknown) => {
              errors.push(`replica ${index}: ${err instanceof Error ? err.message : String(err)}`);
              if (++failed === live.length) reject(new Error(`no replica logged a line matching ${String(match)}\n${errors.join('\n')}`));
            },
          );
        }
      });
    },
    readyz: async (index) => {
      const res = await fetch(`${at(index).url}/readyz`, { headers: { authorization: `Bearer ${at(0).credentials().operatorToken}` } });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    close: async () => {
      await Promise.all(procs.map((gw) => gw.kill()));
      await proxy.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
