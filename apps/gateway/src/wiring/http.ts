import type { SharedConsoleSessions } from '@switchboard/store';
import type { IncomingMessage } from 'node:http';
import { readFileSync } from 'node:fs';
import { AccessEvents, type CapabilityRegistry, type Channel, FileShelf, type Storage } from '@switchboard/core';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { controlApi, sendError } from '../api/index.js';
import { registerOpenApi } from '../api/openapi.js';
import { AuthLimiter, type FailedAuthGate } from '../auth-limiter.js';
import { SharedAuthLimiter } from '../shared-auth-limiter.js';
import { clientAddressResolver } from '../client-address.js';
import type { Config } from '../config.js';
import { registerFileDownloads } from '../files-route.js';
import { httpServerOptions, registerHttpEdges } from '../http-edges.js';
import { registerReadyz } from '../readyz.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { registerMetricsRoute } from '../metrics/metrics-http.js';
import type { ExecStatus } from './exec.js';
import type { DatabaseHealth } from './storage-health.js';
import type { ReplicaPlane } from './replicas.js';
import { TokenExpiry } from '../token-expiry.js';
import { ConsoleSessions } from '../console/console-sessions.js';
import { consoleSite } from '../console/static-site.js';
import { EventHub } from '../console/event-hub.js';
import { WEB_CHAT_CHANNEL } from '../console/web-chat-auth.js';
import type { LiveFeed } from '../console/live-feed.js';
import type { ConsoleAuth } from '../console/request-auth.js';
import type { Agents } from './agents.js';
import type { OpenedChannels } from './channels.js';
import type { Domain } from './domain.js';
import type { Models } from './models.js';
import { personalDataOf, workspacesRootOf } from './personal-data.js';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The HTTP app (not listening yet) and what its routes share with the channels. */
export interface HttpPlane {
  app: FastifyInstance;
  /** Failed-auth rate limiting, shared by the control API, /readyz and the WebSocket channel. */
  limiter: FailedAuthGate;
  /** The client key of a request (trusted proxies honoured, IPv6 by /64). */
  clientAddress(req: IncomingMessage): string;
  /** Where the control API announces access changes. */
  access: AccessEvents;
  /** Closes sockets on a client token when its `expiresAt` passes. */
  tokenExpiry: TokenExpiry;
  /** Files offered at `GET /files/{id}` (`tools.sendFile`). */
  files: FileShelf;
  /** The console's sign-in state (absent when `console.enabled` is false); told the listener's URL once it listens. */
  console?: ConsoleAuth & { listening(url: string): void };
}

/** What the HTTP app is built over. */
export interface HttpInputs {
  cfg: Readonly<Config>;
  log: Logger;
  storage: Storage;
  registry: CapabilityRegistry;
  agents: Agents;
  models: Models;
  channels: OpenedChannels;
  domain: Domain;
  /** Whether `exec` is offered and why not (shown by `/readyz` with a `read` token). */
  exec: ExecStatus;
  /** The database's state (the storage health check), for `/readyz`. */
  database(): DatabaseHealth;
  /** This process as a replica (its id and leases), for `/readyz` and `GET /api/v1/replicas`. */
  replicas: ReplicaPlane;
  /** True once the gateway is shutting down: every request then gets 503 `shutting_down`. */
  stopping(): boolean;
  /** Served at `/metrics` on this port (behind a `read` token) when `metrics.port` is unset. */
  metrics?: GatewayMetrics;
  /** The console's live feed (`console.enabled`). */
  feed?: LiveFeed;
  /** Replicas on PostgreSQL: the console's sessions are rows every replica reads. */
  consoleSessions?: SharedConsoleSessions;
}

/**
 * Start-up step: the Fastify app with the HTTP edges, `/healthz`, `/readyz`, `/metrics` (unless on a port of its own), the OpenAPI
 * document and the control API under `/api/v1`. trustProxy stays off: the client address comes
 * from `gateway.trustedProxies` alone.
 */
export async function buildHttp(inputs: HttpInputs): Promise<HttpPlane> {
  const { cfg, log, storage, domain } = inputs;
  const app: FastifyInstance = Fastify({
    loggerInstance: log as unknown as FastifyBaseLogger,
    bodyLimit: cfg.gateway.bodyLimit,
    trustProxy: false,
    disableRequestLogging: false,
    maxParamLength: 1000,
    ...httpServerOptions(cfg.gateway),
  });
  app.addHook('onRequest', async (_req, reply) => {
    if (inputs.stopping()) return sendError(reply, 503, 'shutting_down', 'The gateway is shutting down.');
  });
  const site = cfg.console.enabled ? consoleSite(cfg.console, log) : undefined;
  registerHttpEdges(app, site?.fallback);

  const authLimits = { maxFailures: cfg.auth.maxFailures, windowMs: cfg.auth.window, lockoutMs: cfg.auth.lockout };
  // Replicas on one database (PostgreSQL) share the failed-auth windows; one process keeps them in memory.
  const limiter: FailedAuthGate = storage.counters ? new SharedAuthLimiter(storage.counters, authLimits) : new AuthLimiter(authLimits);
  const clientAddress = clientAddressResolver(cfg.gateway.trustedProxies);
  const access = new AccessEvents((err, change) => log.error({ err, change: change.type }, 'an access-change listener failed'));
  const tokenExpiry = new TokenExpiry(access);
  const channels = inputs.channels.list;
  app.get('/healthz', async () => ({ ok: true, status: 'live' }));
  const consoleAuth = cfg.console.enabled && inputs.feed ? consoleAuthOf(cfg, storage, access, channels, inputs.feed, app, inputs.consoleSessions) : undefined;
  await registerReadyz(app, {
    channels,
    storage,
    limiter,
    clientAddress,
    details: cfg.gateway.readyzDetails,
    tools: { exec: inputs.exec },
    database: inputs.database,
    replica: () => ({ id: inputs.replicas.id, leases: inputs.replicas.held() }),
    ...(consoleAuth ? { console: consoleAuth } : {}),
  });
  if (inputs.metrics && cfg.metrics.port === undefined) registerMetricsRoute(app, inputs.metrics, { storage, limiter, clientAddress });
  await registerOpenApi(app, VERSION);
  await site?.register(app);
  const files = new FileShelf({ ttlMs: cfg.tools.sendFile.downloadTtl, maxBytes: cfg.tools.sendFile.downloadMaxBytes });
  registerFileDownloads(app, { shelf: files, storage, limiter, clientAddress });
  await app.register(controlApi, {
    prefix: '/api/v1',
    storage,
    broker: domain.broker,
    boundary: domain.boundary,
    channels,
    engine: domain.engine,
    policy: domain.policy,
    registry: inputs.registry,
    limiter,
    clientAddress,
    access,
    agentTools: inputs.agents.toolNames,
    models: { list: inputs.models.list, maxTokens: inputs.models.maxTokens },
    budgets: domain.budgets,
    replicas: inputs.replicas,
    personalData: personalDataOf(storage, workspacesRootOf(cfg)),
    ...(consoleAuth ? { console: consoleAuth } : {}),
  });
  return { app, limiter, clientAddress, access, tokenExpiry, files, ...(consoleAuth ? { console: consoleAuth } : {}) };
}

/** The console's sessions, ended by access changes, and its public origin (configured, or the listener's once known). */
function consoleAuthOf(
  cfg: Readonly<Config>,
  storage: Storage,
  access: AccessEvents,
  channels: readonly Channel[],
  feed: LiveFeed,
  app: FastifyInstance,
  shared: SharedConsoleSessions | undefined,
): ConsoleAuth & { listening(url: string): void } {
  const sessions = new ConsoleSessions({
    storage,
    ttlMs: cfg.console.sessionTtl,
    ...(shared
      ? { shared, onError: (err: unknown) => app.log.warn({ err }, 'console: deleting a shared session failed (it ends elsewhere at its expiry)') }
      : {}),
  });
  const hub = new EventHub({
    feed,
    storage,
    channels,
    log: app.log,
    statsIntervalMs: cfg.console.statsInterval,
    pingIntervalMs: cfg.console.pingInterval,
  });
  access.on(sessions.onAccessChange);
  access.on(hub.onAccessChange);
  sessions.onEnd(hub.onSessionEnd);
  // Web chat sockets opened with the session close with it.
  sessions.onEnd((s) => access.emit({ type: 'console_session_ended', sessionId: s.hash }));
  // Live streams never end by themselves: end them before the server waits for its connections.
  app.addHook('preClose', async () => hub.closeAll());
  let origin = cfg.console.publicOrigin;
  return {
    sessions,
    hub,
    publicOrigin: () => origin,
    webChat: channels.some((c) => c.id === WEB_CHAT_CHANNEL),
    listening: (url) => {
      origin ??= new URL(url).origin;
    },
  };
}
