import type { ReplicaFanout } from './replica-fanout.js';
import { rmSync } from 'node:fs';
import type { Storage } from '@switchboard/core';
import type { Logger } from 'pino';
import { boundarySettings } from '../boundary-settings.js';
import type { LiveConfig } from '../live-config.js';
import type { InstanceLock } from '../instance-lock.js';
import type { OpenedChannels } from './channels.js';
import type { Domain } from './domain.js';
import type { HttpPlane } from './http.js';
import type { Endpoint } from './publish.js';
import type { McpConnection } from './tools.js';
import type { MetricsServer } from '../metrics/metrics-http.js';
import type { StorageHealth } from './storage-health.js';
import type { ReplicaPlane } from './replicas.js';

/** Whether the gateway is shutting down: set once by `close`, read by the HTTP hook, the router and the channels. */
export class StopFlag {
  private stopped = false;

  /** True once shutdown began. */
  readonly stopping = (): boolean => this.stopped;
  /** False once shutdown began. */
  readonly accepting = (): boolean => !this.stopped;

  /** Marks the start of shutdown (idempotent). */
  stop(): void {
    this.stopped = true;
  }
}

/**
 * Start-up step, last: the boundary's sweeps start, approvals of turns that ended while the
 * gateway was down are cancelled (before any turn resumes), subagents that were running are
 * marked interrupted (they never run again), the interrupted turns resume, and
 * the `listening` line is logged. Returns how many turns resumed.
 */
export async function resume(domain: Domain, storage: Storage, log: Logger, endpoint: Endpoint): Promise<number> {
  domain.boundary.start();
  await domain.broker.cancelEnded();
  // A subagent never resumes (its parent's `task` call is told it was interrupted): its sidechain says so.
  // Replicas (PostgreSQL): other replicas' subagents still run; a lane that resumes a turn cuts off its own.
  const cut = storage.engine === 'postgres' ? 0 : await storage.sidechains.interruptRunning();
  if (cut > 0) log.info({ sidechains: cut }, 'subagents cut off by the restart marked interrupted');
  const resumed = await domain.engine.resumeAll();
  log.info({ event: 'listening', url: endpoint.url, host: endpoint.host, port: endpoint.port, resumedTurns: resumed }, 'gateway listening');
  return resumed;
}

/** Everything `close` shuts down. */
export interface ShutdownParts {
  flag: StopFlag;
  log: Logger;
  /** `limits.shutdownGrace`: how long running turns may finish before they are suspended. */
  shutdownGraceMs: number;
  domain: Domain;
  http: HttpPlane;
  mcp: McpConnection;
  channels: OpenedChannels;
  storage: Storage;
  /** The database health check, stopped before the database closes. */
  health: StorageHealth;
  /** This replica's leases: receivers handed off first, the presence released before the database closes. */
  replicas: ReplicaPlane;
  endpointFile: string;
  instance: InstanceLock;
  /** The metrics port (`metrics.port`), if it has one. */
  metricsServer?: MetricsServer;
  /** Replicas on PostgreSQL: the listening connection closes after the channels stopped. */
  fanout?: ReplicaFanout;
}

/**
 * The gateway's `close`: hand this replica's receivers over (release their leases), stop accepting, let running turns finish for the grace period, suspend
 * the rest, then close broker, token timers, grants, boundary and MCP, stop the channels, close
 * HTTP (and the metrics port), release the replica's presence, close the database, remove the endpoint file and release the data-dir lock, in that order.
 * Idempotent: every call returns the same promise.
 */
export function shutdownSequence(parts: ShutdownParts): () => Promise<void> {
  const { flag, log, domain, channels } = parts;
  const { engine } = domain;
  let closing: Promise<void> | null = null;
  return () =>
    (closing ??= (async () => {
      // Receivers first, while this replica still accepts: what they were storing is stored, and another replica polls at once.
      await parts.replicas.handOff();
      flag.stop();
      const before = engine.active;
      const drained = await engine.drain(parts.shutdownGraceMs);
      const suspended = drained ? 0 : engine.active;
      await engine.shutdown();
      domain.broker.close();
      parts.http.tokenExpiry.close();
      domain.policy.grants.close();
      await domain.boundary.stop();
      await parts.mcp.close();
      log.info({ event: 'shutdown', runningAtSignal: before, finished: before - suspended, suspended }, 'turns settled for shutdown');
      for (const channel of channels.list)
        await channel.stop('shutdown').catch((err: unknown) => log.error({ err, channel: channel.id }, 'channel stop failed'));
      await parts.http.app.close();
      await parts.metricsServer?.close();
      await parts.health.stop();
      await parts.fanout?.close();
      await parts.replicas.close();
      await parts.storage.close();
      rmSync(parts.endpointFile, { force: true });
      parts.instance.release();
    })());
}

/**
 * Applies each reload that changed something: the log level, the boundary's settings, and the
 * policy's rule cache (dropped after the policy's settings were replaced, see livePolicySettings).
 */
export function followReloads(live: LiveConfig, log: Logger, domain: Domain): void {
  live.onChange((next) => {
    log.level = next.log.level;
    domain.boundary.update(boundarySettings(next));
    domain.policy.invalidateRules();
  });
}
