import { type Channel, SkillCatalog, type Storage, type TurnEngine } from '@switchboard/core';
import { skillSettingsOf } from './config-skills.js';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { LiveConfig, type ReloadOutcome } from './live-config.js';
import { buildAgents, prepareWorkspaces } from './wiring/agents.js';
import { openChannels, startChannels } from './wiring/channels.js';
import { buildDomain } from './wiring/domain.js';
import { buildHttp } from './wiring/http.js';
import { buildModels } from './wiring/models.js';
import { StopFlag, followReloads, resume, shutdownSequence } from './wiring/lifecycle.js';
import { listen, publishCredentials, writeEndpointFile } from './wiring/publish.js';
import { openDataDir, openStorage } from './wiring/storage.js';
import { followReplicas, openFanout } from './wiring/replica-fanout.js';
import { buildReplicas } from './wiring/replicas.js';
import { StorageHealth } from './wiring/storage-health.js';
import { buildRegistry, connectMcp } from './wiring/tools.js';
import { type ExecHost, prepareExec } from './wiring/exec.js';
import { configSecrets } from './config.js';
import { scrubber } from './logger.js';
import type { GatewayMetrics, MetricsSources } from './metrics/gateway-metrics.js';
import { startMetricsServer } from './metrics/metrics-http.js';
import { LiveFeed } from './console/live-feed.js';

export interface Gateway {
  app: FastifyInstance;
  storage: Storage;
  engine: TurnEngine;
  channels: Channel[];
  url: string;
  /** Graceful shutdown: stop accepting, drain for the grace period, suspend the rest, close. */
  close(): Promise<void>;
  /** Applies a newly loaded config's live keys (SIGHUP); the others are reported as needing a restart. */
  reload(next: Readonly<Config>): ReloadOutcome;
}

/** What the CLI hands the gateway besides the config. */
export interface StartOptions {
  /** The config file, if the config came from one (the turn policy protects it from the file tools). */
  configFile?: string;
  /** The `PATH` command hooks get (the CLI's). */
  hookPath: string;
  /** The host facts `exec` needs, resolved by the CLI; absent: `exec` is not offered (tools.exec cannot be checked). */
  exec?: ExecHost;
}

/**
 * Builds and starts the gateway, step by step (apps/gateway/src/wiring). The order of the side
 * effects is part of the contract: the data-dir lock before any write; on a first start the
 * workspaces move only once the owner exists; credentials only after a successful listen; ended
 * turns' approvals cancelled before the interrupted turns resume.
 */
export async function startGateway(cfg: Readonly<Config>, log: Logger, opts: StartOptions): Promise<Gateway> {
  const instance = openDataDir(cfg.gateway);
  // The policy reads the config through this holder and the boundary is handed new settings on its change, so SIGHUP reaches them.
  const live = new LiveConfig(cfg);
  const { storage, databaseFile } = await openStorage(cfg, log, scrubber(configSecrets(cfg)));
  const replicas = buildReplicas(cfg, storage, log);
  // Replicas share one database: every line names the replica that wrote it.
  if (replicas.receiving === 'leased') log = log.child({ replica: replicas.id });
  const fanout = await openFanout(cfg, storage, log, replicas.id);
  let engine: TurnEngine | undefined;
  const health = new StorageHealth(storage, {
    intervalMs: cfg.storage.healthInterval,
    log: log.child({ component: 'storage' }),
    scrub: scrubber(configSecrets(cfg)),
    onRecovered: async () => engine?.resumeInterrupted() ?? 0,
  });
  const mcp = await connectMcp(cfg, log);
  const channels = await openChannels(cfg, log);
  const exec = opts.exec
    ? await prepareExec(cfg, log, opts.exec, storage, { scrub: scrubber(configSecrets(cfg)) })
    : { status: { available: false as const, sandbox: 'bwrap' as const, reason: 'the host was not described to the gateway (started without the CLI)' } };
  const skills = await SkillCatalog.load(skillSettingsOf(cfg), log.child({ component: 'skills' }));
  const registry = buildRegistry(cfg, log, mcp, channels.list, storage, {
    tools: exec.tool ? [exec.tool] : [],
    skills,
    ...('sandboxGroup' in exec && exec.sandboxGroup !== undefined ? { sandboxGroup: exec.sandboxGroup } : {}),
  });
  const workspaces = await prepareWorkspaces(cfg, storage, log);
  const agents = buildAgents(cfg, registry, workspaces.directories, log, skills);
  const models = buildModels(cfg, log);
  const flag = new StopFlag();
  const metrics = cfg.metrics.enabled ? await openMetrics({ storage, channels: channels.list, activeTurns: () => engine?.active ?? 0 }) : undefined;
  const feed = cfg.console.enabled ? new LiveFeed() : undefined;
  const domain = await buildDomain({
    cfg,
    live,
    log,
    storage,
    databaseFile,
    onStorageOutage: () => health.outage(),
    configFile: opts.configFile,
    hookPath: opts.hookPath,
    registry,
    skills,
    workspaces: workspaces.directories,
    agents,
    models,
    channels,
    accepting: flag.accepting,
    ...(metrics ? { metrics } : {}),
    ...(feed ? { feed } : {}),
    ...(fanout ? { replicaBus: fanout.bus, subagentSlots: fanout.subagentSlots } : {}),
    replicaId: replicas.id,
  });
  engine = domain.engine;
  const http = await buildHttp({
    cfg,
    log,
    storage,
    registry,
    agents,
    models,
    channels,
    domain,
    exec: exec.status,
    database: () => health.snapshot(),
    ...(fanout ? { consoleSessions: fanout.consoleSessions } : {}),
    replicas,
    stopping: flag.stopping,
    ...(metrics ? { metrics } : {}),
    ...(feed ? { feed } : {}),
  });
  if (fanout) followReplicas(fanout, domain, http.access, log);
  await startChannels({
    cfg,
    log,
    storage,
    channels,
    domain,
    http,
    accepting: flag.accepting,
    receiving: replicas.receiving,
    ...(fanout ? { replicas: fanout.channels } : {}),
  });

  const endpoint = await listen(http.app, cfg.gateway, instance);
  http.console?.listening(endpoint.url);
  const metricsServer =
    metrics && cfg.metrics.port !== undefined
      ? await startMetricsServer(metrics, { port: cfg.metrics.port, host: cfg.metrics.host }, cfg.gateway, log)
      : undefined;
  await publishCredentials(log, storage, cfg.gateway.dataDir);
  if (workspaces.firstStart) await workspaces.migrate();
  const endpointFile = writeEndpointFile(cfg.gateway.dataDir, endpoint);
  await resume(domain, storage, log, endpoint);
  health.start();
  await replicas.start(channels);

  const close = shutdownSequence({
    flag,
    log,
    shutdownGraceMs: cfg.limits.shutdownGrace,
    domain,
    http,
    mcp,
    channels,
    storage,
    health,
    replicas,
    endpointFile,
    instance,
    ...(metricsServer ? { metricsServer } : {}),
    ...(fanout ? { fanout } : {}),
  });
  followReloads(live, log, domain);
  return { app: http.app, storage, engine: domain.engine, channels: channels.list, url: endpoint.url, close, reload: (next) => live.reload(next) };
}

/** The metrics, loaded only when enabled: with `metrics.enabled: false` prom-client is never loaded. */
async function openMetrics(sources: MetricsSources): Promise<GatewayMetrics> {
  const { GatewayMetrics } = await import('./metrics/gateway-metrics.js');
  return new GatewayMetrics(sources);
}
