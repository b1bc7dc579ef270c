import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AnthropicModelClient, UnconfiguredModelClient, withDefaultResultCap, type ModelClient } from '@switchboard/agent';
import {
  AccessEvents,
  ApprovalBroker,
  BoundaryService,
  CapabilityRegistry,
  PolicyService,
  Router,
  TurnEngine,
  WorkspaceDirectories,
  migrateLegacyWorkspace,
  type AcceptResult,
  type AgentRuntime,
  type BoundaryPolicy,
  type Channel,
  type ConversationRef,
  type InboundMessage,
  type Session,
  type SessionKey,
  type Storage,
} from '@switchboard/core';
import { ownValue } from '@switchboard/core';
import { openSqliteStorage } from '@switchboard/store';
import { createFileTools, type McpServerConfig } from '@switchboard/tools';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { bootstrapCredentials, writePrivateFile } from './bootstrap.js';
import { adoptLegacyCredentials, logCredentialsCreated, logLegacyCredentials } from './credentials-file.js';
import { loadChannels } from './channels.js';
import type { Config } from './config.js';
import { controlApi, sendError } from './api/index.js';
import { registerOpenApi } from './api/openapi.js';
import { AuthLimiter } from './auth-limiter.js';
import { clientAddressResolver } from './client-address.js';
import { httpServerOptions, registerHttpEdges } from './http-edges.js';
import { registerReadyz } from './readyz.js';
import { channelContext, type ChannelContextDeps } from './channel-context.js';
import { configSecrets } from './config.js';
import { scrubber } from './logger.js';
import { livePolicySettings } from './policy-settings.js';
import { boundarySettings, pairingSettings } from './boundary-settings.js';
import { TokenExpiry } from './token-expiry.js';
import { acquireInstanceLock } from './instance-lock.js';
import { LiveConfig, type ReloadOutcome } from './live-config.js';
import { listenError, prepareDataDir } from './startup-errors.js';

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

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** The queue mode a channel account's config sets, if any. */
function accountQueueMode(cfg: Readonly<Config>, channelId: string): 'followup' | 'steer' | undefined {
  const [type, account] = channelId.split(':');
  const section = ownValue(cfg.channels as Record<string, { accounts: Record<string, { queueMode?: 'followup' | 'steer' }> } | undefined>, type ?? '');
  return account ? ownValue(section?.accounts, account)?.queueMode : undefined;
}

function modelClient(cfg: Config): ModelClient {
  if (!cfg.model.apiKey) return new UnconfiguredModelClient();
  return new AnthropicModelClient({
    apiKey: cfg.model.apiKey,
    ...(cfg.model.baseUrl ? { baseUrl: cfg.model.baseUrl } : {}),
    requestTimeoutMs: cfg.limits.modelRequestTimeout,
    streamIdleTimeoutMs: cfg.limits.modelStreamIdleTimeout,
  });
}

/** Builds and starts the gateway: database, engine, channels, HTTP. `opts.hookPath` is the `PATH` command hooks get (the CLI's). */
export async function startGateway(cfg: Readonly<Config>, log: Logger, opts: { configFile?: string; hookPath: string }): Promise<Gateway> {
  // Before anything is written to the data dir: it is usable, and no other gateway holds it.
  prepareDataDir(cfg.gateway.dataDir);
  const instance = acquireInstanceLock(cfg.gateway.dataDir, { host: cfg.gateway.host, port: cfg.gateway.port });
  // The policy service reads the config through this holder and the boundary is handed new settings on its change, so SIGHUP reaches them.
  const live = new LiveConfig(cfg);
  const databaseFile = join(cfg.gateway.dataDir, 'switchboard.db');
  const storage = openSqliteStorage({ file: databaseFile });

  // The MCP SDK is loaded only when servers are configured (it costs ~200 ms of start-up).
  const mcpServers = cfg.mcpServers as Record<string, McpServerConfig>;
  const mcp =
    Object.keys(mcpServers).length === 0
      ? { tools: [], close: async () => {} }
      : await (await import('@switchboard/tools/mcp')).connectMcpServers(mcpServers, {
          log: log.child({ component: 'mcp' }),
          connectTimeoutMs: cfg.limits.mcpConnectTimeout,
        });
  const channels: Channel[] = await loadChannels(cfg, log);
  if (channels.length === 0) {
    log.warn(
      { event: 'no_chat_channel' },
      'no channel is configured, so nobody can chat (/ws answers 404): add an account under channels.websocket.accounts (or channels.telegram, channels.slack, channels.webhook)',
    );
  }
  // Every tool's results are capped: the file tools by the same limit, any other tool (MCP) by default.
  const resultCap = cfg.limits.toolResultMaxChars;
  const fileTools = createFileTools({
    maxResultChars: resultCap,
    regexMaxLength: cfg.limits.regexMaxLength,
    regexDeadlineMs: cfg.limits.regexDeadline,
    onRegexWorkerTerminated: ({ why, toolUseId }) => log.warn({ component: 'search_files', toolUseId, why }, `regex worker terminated (${why})`),
  });
  const tools = [...fileTools, ...mcp.tools].map((t) => withDefaultResultCap(t, resultCap));
  const registry = new CapabilityRegistry({ tools, mcpServers: Object.keys(cfg.mcpServers), channels, model: cfg.model, hooks: cfg.hooks });
  const agents = new Map<string, AgentRuntime>();
  const workspacesRoot = cfg.workspaces.root ?? join(cfg.gateway.dataDir, 'workspaces');
  mkdirSync(workspacesRoot, { recursive: true, mode: 0o700 });
  const workspaces = new WorkspaceDirectories({
    root: workspacesRoot,
    modeOf: (id) => (Object.hasOwn(cfg.agents, id) ? cfg.agents[id]!.workspace.mode : 'per-person'),
  });
  const legacyRoot = join(cfg.gateway.dataDir, 'workspaces');
  /** Moves each agent's old single workspace into the per-person layout (the earliest owner's directory). */
  const migrateWorkspaces = async () => {
    const principals = await storage.principals.list();
    for (const [id, a] of Object.entries(cfg.agents)) {
      await migrateLegacyWorkspace({ agentId: id, legacyRoot, root: workspacesRoot, mode: a.workspace.mode, principals, log }).catch((err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        throw new Error(
          `could not move the old workspace of agent "${id}" (${join(legacyRoot, id)}) into the per-person layout under workspaces.root: ${why}`,
          { cause: err },
        );
      });
    }
  };
  // On a first start the owner is created only once the listen succeeded (below): the move waits for it.
  const firstStart = (await storage.principals.count()) === 0;
  if (!firstStart) await migrateWorkspaces();
  for (const [id, a] of Object.entries(cfg.agents)) {
    agents.set(id, {
      id,
      system: [{ type: 'text', text: a.systemPrompt }],
      tools: registry.toolsFor(a.tools.profile),
      maxTurns: a.maxTurns,
      // Each turn works in its person's or room's directory (PolicyService); this one is never created.
      workspace: workspaces.none(id),
    });
  }
  const hiddenMcp = registry.groupMembers('group:mcp').filter((n) => ![...agents.values()].some((a) => a.tools.some((t) => t.name === n)));
  if (hiddenMcp.length > 0) log.warn({ tools: hiddenMcp }, 'MCP tools that no agent offers: use tools.profile "full" or add "group:mcp"');
  const defaultAgent = agents.has('default') ? 'default' : [...agents.keys()][0]!;
  const byId = new Map(channels.map((c) => [c.id, c]));

  const scrub = scrubber(configSecrets(cfg));
  let policy: PolicyService | undefined;
  const broker = new ApprovalBroker({
    storage,
    log: log.child({ component: 'approvals' }),
    timeoutMs: cfg.permissions.approvalTimeout,
    selfApproveRoles: cfg.permissions.selfApproveRoles,
    onRuleSaved: (rule) => void policy?.ruleSaved(rule).catch((err: unknown) => log.error({ err, ruleId: rule.id }, 'recording a saved rule failed')),
  });
  policy = new PolicyService({
    settings: livePolicySettings(live),
    storage,
    broker,
    log: log.child({ component: 'policy' }),
    scrub,
    hooks: { config: cfg.hooks, env: { PATH: opts.hookPath }, defaultTimeoutMs: cfg.permissions.hookTimeout },
    denialLimits: cfg.permissions.denialLimits,
    sessionGrantTtlMs: cfg.permissions.sessionGrantTtl,
    protectedFiles: { configFile: opts.configFile, databaseFile },
    expandRule: (r) => registry.expandRule(r),
    // The boundary is built below; a channel's permissionMode and rooms come with operators' overrides applied.
    boundaryPolicy: (channelId): Promise<BoundaryPolicy | null> => boundary.policy(channelId),
    workspaces,
    notify: async (to, text) => {
      await byId.get(`${to.channel}:${to.account}`)?.notify(to, text);
    },
  });
  await policy.grants.start();
  const policyService = policy;
  const engineQueueMode = (session: Session, channelId: string) =>
    session.settings.queueMode ?? accountQueueMode(cfg, channelId) ?? ownValue(cfg.agents, session.agentId)?.queueMode ?? 'followup';
  const engine = new TurnEngine({
    storage,
    log: log.child({ component: 'engine' }),
    model: modelClient(cfg),
    modelName: cfg.model.name,
    ...(cfg.model.fallback ? { fallbackModel: cfg.model.fallback } : {}),
    maxTokens: cfg.model.maxTokens,
    retry: { maxRetries: cfg.limits.modelMaxRetries, baseDelayMs: cfg.limits.modelRetryBaseDelay, maxDelayMs: cfg.limits.modelRetryMaxDelay },
    toolTimeoutMs: cfg.limits.toolTimeout,
    toolTimeouts: cfg.limits.toolTimeouts,
    maxContinuations: cfg.limits.maxContinuations,
    transcriptCacheSize: cfg.limits.transcriptCacheSessions,
    transcriptCacheEntries: cfg.limits.transcriptCacheEntries,
    queueMode: engineQueueMode,
    agent: (id) => agents.get(id) ?? agents.get(defaultAgent)!,
    channel: (id) => byId.get(id),
    policy: (ctx) => policyService.forTurn(ctx),
    cancelApprovals: (turnId, reason) => broker.cancelTurn(turnId, reason),
  });

  // Where a person's message goes (packages/core/src/router.ts): the router, with the boundary gate between its accept and admit.
  const router = new Router({
    defaultAgent,
    inboxMaxBytes: cfg.limits.inboxMaxBytes,
    storage,
    engine,
    gate: (message): Promise<AcceptResult> => boundary.accept(message),
    accepting: () => !stopping,
  });
  const boundary = new BoundaryService({
    storage,
    log: log.child({ component: 'boundary' }),
    settings: boundarySettings(cfg),
    pairing: pairingSettings(cfg),
    rateLimitWindow: cfg.audit.rateLimitWindow,
    channel: (id) => byId.get(id),
    admit: (message): Promise<AcceptResult> => router.admit(message),
  });
  const sessionKey = (conversation: ConversationRef, principalId: string): SessionKey => router.sessionKey(conversation, principalId);
  const accept = (message: InboundMessage) => router.accept(message);

  let stopping = false;
  // trustProxy stays off: the client address comes from clientAddress (gateway.trustedProxies) alone.
  const app: FastifyInstance = Fastify({
    loggerInstance: log as unknown as FastifyBaseLogger,
    bodyLimit: cfg.gateway.bodyLimit,
    trustProxy: false,
    disableRequestLogging: false,
    maxParamLength: 1000,
    ...httpServerOptions(cfg.gateway),
  });
  app.addHook('onRequest', async (_req, reply) => {
    if (stopping) return sendError(reply, 503, 'shutting_down', 'The gateway is shutting down.');
  });
  registerHttpEdges(app);

  const limiter = new AuthLimiter({ maxFailures: cfg.auth.maxFailures, windowMs: cfg.auth.window, lockoutMs: cfg.auth.lockout });
  const clientAddress = clientAddressResolver(cfg.gateway.trustedProxies);
  const access = new AccessEvents((err, change) => log.error({ err, change: change.type }, 'an access-change listener failed'));
  const tokenExpiry = new TokenExpiry(access);
  app.get('/healthz', async () => ({ ok: true, status: 'live' }));
  await registerReadyz(app, { channels, storage, limiter, clientAddress, details: cfg.gateway.readyzDetails });
  await registerOpenApi(app, VERSION);
  await app.register(controlApi, {
    prefix: '/api/v1',
    storage,
    broker,
    boundary,
    channels,
    engine,
    policy: policyService,
    registry,
    limiter,
    clientAddress,
    access,
    agentTools: Object.fromEntries([...agents].map(([id, a]) => [id, a.tools.map((t) => t.name)])),
  });

  const ctxDeps: ChannelContextDeps = {
    storage,
    engine,
    broker,
    policy: policyService,
    log,
    accept,
    sessionKey,
    queueMode: engineQueueMode,
    modelName: cfg.model.name,
    limiter,
    clientAddress,
    access,
    tokenExpiry,
    accepting: () => !stopping,
    inboxMaxAttempts: cfg.limits.inboxMaxAttempts,
  };
  for (const ch of channels) await ch.start(channelContext(ctxDeps, ch, app));

  try {
    await app.listen({ host: cfg.gateway.host, port: cfg.gateway.port });
  } catch (err) {
    throw listenError(err, cfg.gateway.host, cfg.gateway.port);
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : cfg.gateway.port;
  const host = cfg.gateway.host.includes(':') ? `[${cfg.gateway.host}]` : cfg.gateway.host;
  const url = `http://${host}:${port}`;
  instance.update({ host: cfg.gateway.host, port });
  // Credentials only once the listen succeeded: a start that fails leaves none behind.
  logLegacyCredentials(log, adoptLegacyCredentials(cfg.gateway.dataDir));
  const credentials = await bootstrapCredentials(storage, cfg.gateway.dataDir);
  if (credentials) logCredentialsCreated(log, credentials, cfg.gateway.dataDir);
  if (firstStart) await migrateWorkspaces();
  const endpointFile = join(cfg.gateway.dataDir, 'endpoint');
  writePrivateFile(endpointFile, `${JSON.stringify({ url, host: cfg.gateway.host, port, pid: process.pid })}\n`);
  boundary.start();
  await broker.cancelEnded();
  const resumed = await engine.resumeAll();
  log.info({ event: 'listening', url, host: cfg.gateway.host, port, resumedTurns: resumed }, 'gateway listening');

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      stopping = true;
      const before = engine.active;
      const drained = await engine.drain(cfg.limits.shutdownGrace);
      const suspended = drained ? 0 : engine.active;
      await engine.shutdown();
      broker.close();
      tokenExpiry.close();
      policyService.grants.close();
      await boundary.stop();
      await mcp.close();
      log.info({ event: 'shutdown', runningAtSignal: before, finished: before - suspended, suspended }, 'turns settled for shutdown');
      for (const ch of channels) await ch.stop('shutdown').catch((err: unknown) => log.error({ err, channel: ch.id }, 'channel stop failed'));
      await app.close();
      storage.close();
      rmSync(endpointFile, { force: true });
      instance.release();
    })());
  live.onChange((next) => {
    log.level = next.log.level;
    boundary.update(boundarySettings(next));
    policyService.invalidateRules();
  });
  const reload = (next: Readonly<Config>) => live.reload(next);
  return { app, storage, engine, channels, url, close, reload };
}
