import { AnthropicModelClient, type ModelClient, UnconfiguredModelClient } from '@switchboard/agent';
import {
  type AcceptResult,
  type ApprovalActivity,
  ApprovalBroker,
  type BoundaryPolicy,
  BoundaryService,
  BudgetGate,
  BudgetService,
  type CapabilityRegistry,
  type CompactionSettings,
  HookBridge,
  InstructionService,
  PolicyService,
  Router,
  type Session,
  type SkillCatalog,
  TOOL_GROUPS,
  type ToolGroup,
  type ReplicaBus,
  type SubagentSlots,
  type Storage,
  SubagentRunner,
  TurnEngine,
  type WorkspaceDirectories,
  type TurnEndFacts,
  type ReplicaLaneSettings,
} from '@switchboard/core';
import { ExecRunQueue } from '@switchboard/tools';
import type { Logger } from 'pino';
import { boundarySettings, pairingSettings } from '../boundary-settings.js';
import { type Config, configSecrets } from '../config.js';
import { toolResultBudgets } from '../config-context.js';
import { budgetSettings } from '../config-budgets.js';
import { deferralSettings } from '../config-deferral.js';
import { instructionSettingsOf } from '../config-instructions.js';
import type { LiveConfig } from '../live-config.js';
import { scrubber } from '../logger.js';
import { execLoopTimeout } from './exec.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { type ModelCallObserver, timedModelClient, watchedPolicy } from '../metrics/observers.js';
import type { LiveFeed } from '../console/live-feed.js';
import { APPROVAL_SETTLED, announceRulesChanged } from './replica-fanout.js';
import { livePolicySettings } from '../policy-settings.js';
import type { Agents } from './agents.js';
import type { Models } from './models.js';
import type { OpenedChannels } from './channels.js';
import { type QueueMode, queueModeResolver } from './queue-mode.js';

/** What the domain services are built from: the earlier steps' results and the start-up options. */
export interface DomainInputs {
  cfg: Readonly<Config>;
  /** The policy reads its settings through this holder, so SIGHUP reaches them. */
  live: LiveConfig;
  log: Logger;
  storage: Storage;
  /** The SQLite file (absent on PostgreSQL). */
  databaseFile?: string | undefined;
  /** Told when a turn was cut off by a storage outage (the health check then resumes it once the database answers). */
  onStorageOutage?: () => void;
  /** The config file (the policy protects it from the file tools). */
  configFile: string | undefined;
  /** The `PATH` command hooks get (the CLI's). */
  hookPath: string;
  registry: CapabilityRegistry;
  /** The skills read at start-up (their switches are rules, read per turn). */
  skills: SkillCatalog;
  workspaces: WorkspaceDirectories;
  agents: Agents;
  /** The resolved `models.<name>` specs and the capped `max_tokens`. */
  models: Models;
  channels: OpenedChannels;
  /** False once the gateway is shutting down (the router then refuses new messages). */
  accepting(): boolean;
  /** The Prometheus metrics (`metrics.enabled`): turn ends, model calls, tool calls and approvals are counted into them. */
  metrics?: GatewayMetrics;
  /** The console's live feed (`console.enabled`): approvals, pairing codes, turn ends and model calls are reported to it. */
  feed?: LiveFeed;
  /** Replicas on PostgreSQL: decided approvals and changed rules are announced to the others (see replica-fanout.ts). */
  replicaBus?: ReplicaBus;
  /** Replicas on PostgreSQL: subagent slots counted across replicas. */
  subagentSlots?: SubagentSlots;
  /** This process's replica id (`gateway.replicaId`): on PostgreSQL, the owner of its session leases. */
  replicaId?: string;
}

/** The domain services (packages/core), wired to each other. */
export interface Domain {
  broker: ApprovalBroker;
  policy: PolicyService;
  engine: TurnEngine;
  router: Router;
  boundary: BoundaryService;
  /** The budgets in force and the spend against them (control API, `/usage`). */
  budgets: BudgetService;
  /** The queue mode of a session on a channel account (the engine's and the channels'). */
  queueMode(session: Session, channelId: string): QueueMode;
}

/**
 * Start-up step: the approval broker and turn policy (whose session grants start now), the turn
 * engine, and the router with the boundary gate between its accept and admit. The policy reads
 * the boundary's effective policy and the broker reports saved rules to the policy, so these are
 * late-bound to services built after them.
 */
export async function buildDomain(inputs: DomainInputs): Promise<Domain> {
  let boundary: BoundaryService | undefined;
  const { broker, policy } = await buildPolicy(inputs, (channelId) => boundaryBuilt(boundary).policy(channelId));
  const queueMode = queueModeResolver(inputs.cfg);
  const budgets = await buildBudgets(inputs);
  const engine = buildEngine(inputs, { broker, policy, queueMode, budgets });
  const routing = buildRouting(inputs, engine);
  boundary = routing.boundary;
  return { broker, policy, engine, router: routing.router, boundary, budgets: budgets.service, queueMode };
}

function boundaryBuilt(boundary: BoundaryService | undefined): BoundaryService {
  if (!boundary) throw new Error('the boundary gate was used before it was built');
  return boundary;
}

const isToolGroup = (group: string): group is ToolGroup => (TOOL_GROUPS as readonly string[]).includes(group);

/** What the broker reports approvals to: the console's feed, and the other replicas (a decision here wakes a turn waiting there). */
function approvalActivity(inputs: DomainInputs): ((a: ApprovalActivity) => void) | undefined {
  const { feed, replicaBus } = inputs;
  if (!replicaBus) return feed?.approval;
  return (a) => {
    feed?.approval(a);
    if (a.type === 'decided') replicaBus.publish({ topic: APPROVAL_SETTLED, approvalId: a.approvalId });
  };
}

/** The approval broker and the turn policy; the policy's session grants are started. */
async function buildPolicy(
  inputs: DomainInputs,
  boundaryPolicy: (channelId: string) => Promise<BoundaryPolicy | null>,
): Promise<{ broker: ApprovalBroker; policy: PolicyService }> {
  const { cfg, log, storage, registry, channels } = inputs;
  const scrub = scrubber(configSecrets(cfg));
  let policy: PolicyService | undefined;
  const broker = new ApprovalBroker({
    storage,
    log: log.child({ component: 'approvals' }),
    timeoutMs: cfg.permissions.approvalTimeout,
    selfApproveRoles: cfg.permissions.selfApproveRoles,
    onRuleSaved: (rule) => void policy?.ruleSaved(rule).catch((err: unknown) => log.error({ err, ruleId: rule.id }, 'recording a saved rule failed')),
    channelWait: (channelId) => channels.byId.get(channelId)?.approvalWait,
    ...(inputs.metrics ? { onDecided: inputs.metrics.approvalDecided } : {}),
    ...(approvalActivity(inputs) ? { onActivity: approvalActivity(inputs) } : {}),
  });
  policy = new PolicyService({
    settings: livePolicySettings(inputs.live),
    storage,
    broker,
    log: log.child({ component: 'policy' }),
    scrub,
    ...(inputs.replicaBus ? { onRulesChanged: announceRulesChanged(inputs.replicaBus) } : {}),
    hooks: { config: cfg.hooks, env: { PATH: inputs.hookPath }, defaultTimeoutMs: cfg.permissions.hookTimeout },
    denialLimits: cfg.permissions.denialLimits,
    sessionGrantTtlMs: cfg.permissions.sessionGrantTtl,
    protectedFiles: { configFile: inputs.configFile, databaseFile: inputs.databaseFile },
    expandRule: (rule) => registry.expandRule(rule),
    offeredTo: (tool) => registry.offeredTo(tool),
    skills: {
      forTurn: (agentId, workspace, turnLog) => inputs.skills.forTurn(agentId, workspace, turnLog),
      groupMembers: (group) => (isToolGroup(group) ? registry.groupMembers(group) : []),
    },
    // A channel's permissionMode and rooms come with operators' overrides applied.
    boundaryPolicy,
    workspaces: inputs.workspaces,
    // The auto-mode classifier calls the same API as the turns (its model is `permissions.auto.model`).
    model: modelClient(cfg),
    notify: async (to, text) => {
      await channels.byId.get(`${to.channel}:${to.account}`)?.notify(to, text);
    },
  });
  await policy.grants.start();
  return { broker, policy };
}

/** The model client of the config: Anthropic's API, or one that explains that no key is configured. */
function modelClient(cfg: Readonly<Config>): ModelClient {
  if (!cfg.model.apiKey) return new UnconfiguredModelClient();
  return new AnthropicModelClient({
    apiKey: cfg.model.apiKey,
    ...(cfg.model.baseUrl ? { baseUrl: cfg.model.baseUrl } : {}),
    requestTimeoutMs: cfg.limits.modelRequestTimeout,
    streamIdleTimeoutMs: cfg.limits.modelStreamIdleTimeout,
    countTokensTimeoutMs: cfg.context.countTokens.timeout,
  });
}

/** The budgets (configured, with stored overrides) and the check before each model call, whose refusals run the `BudgetExceeded` hooks. */
async function buildBudgets(inputs: DomainInputs): Promise<{ service: BudgetService; gate: BudgetGate }> {
  const { cfg, log, storage } = inputs;
  const service = new BudgetService({ settings: budgetSettings(cfg.budgets), storage, log: log.child({ component: 'budgets' }) });
  await service.load();
  const hooks = new HookBridge({ config: cfg.hooks, env: { PATH: inputs.hookPath }, defaultTimeoutMs: cfg.permissions.hookTimeout });
  const gate = new BudgetGate({
    budgets: service,
    audit: storage.audit,
    principals: storage.principals,
    ...(hooks.has('BudgetExceeded')
      ? { onExceeded: async (turn, detail) => void (await hooks.run('BudgetExceeded', { ...turn, ...detail }, log.child({ component: 'budgets' }))) }
      : {}),
  });
  return { service, gate };
}

/** The turn engine over the model client, the agents, the channels and the turn policy. */
function buildEngine(
  inputs: DomainInputs,
  services: { broker: ApprovalBroker; policy: PolicyService; queueMode: Domain['queueMode']; budgets: { gate: BudgetGate } },
): TurnEngine {
  const { cfg, log, agents, channels, metrics, feed } = inputs;
  const { broker, policy } = services;
  const model = modelClient(cfg);
  const retry = { maxRetries: cfg.limits.modelMaxRetries, baseDelayMs: cfg.limits.modelRetryBaseDelay, maxDelayMs: cfg.limits.modelRetryMaxDelay };
  // exec stops its command at the command's own timeout; the loop's limit only backs it up. A
  // task call's limit is the subagents' own.
  const toolTimeouts = { exec: execLoopTimeout(cfg), task: cfg.subagents.timeout, ...cfg.limits.toolTimeouts };
  const resultBudgets = toolResultBudgets(cfg.context, cfg.limits);
  const observers = [metrics, feed].filter((o) => o !== undefined);
  const calls: ModelCallObserver | undefined =
    observers.length === 0
      ? undefined
      : {
          modelCall: (m, seconds, answered) => {
            for (const o of observers) o.modelCall(m, seconds, answered);
          },
        };
  const turnEnds = [metrics?.turnEnded, feed?.turnEnded].filter((f) => f !== undefined);
  // One loop setting for the turns and their subagents; subagents' model calls are timed and counted like the parent's.
  const loop = {
    model: calls ? timedModelClient(model, calls, inputs.models.lookup) : model,
    modelName: cfg.model.name,
    ...(cfg.model.fallback ? { fallbackModel: cfg.model.fallback } : {}),
    maxTokens: inputs.models.maxTokens,
    retry,
    toolTimeoutMs: cfg.limits.toolTimeout,
    toolTimeouts,
    maxContinuations: cfg.limits.maxContinuations,
    resultBudgets,
  };
  const subagents = new SubagentRunner({
    ...loop,
    storage: inputs.storage,
    log: log.child({ component: 'subagents' }),
    types: (agentId) => agents.subagentTypes(agentId),
    maxDepth: cfg.subagents.maxDepth,
    // One queue for the gateway, keyed by the parent turn: perTurn per key, perGateway in all.
    // Replicas: perGateway counts across them (replica-slots.ts).
    slots: inputs.subagentSlots ?? new ExecRunQueue({ perGateway: cfg.subagents.perGateway, perSession: cfg.subagents.perTurn }),
  });
  return new TurnEngine({
    ...loop,
    storage: inputs.storage,
    ...replicaLanes(inputs),
    ...(inputs.onStorageOutage ? { onStorageOutage: inputs.onStorageOutage } : {}),
    log: log.child({ component: 'engine' }),
    imageBlocks: cfg.files.imageBlocks,
    modelSpec: inputs.models.lookup,
    subagents,
    microcompact: cfg.context.microcompact,
    transcriptCacheSize: cfg.limits.transcriptCacheSessions,
    transcriptCacheEntries: cfg.limits.transcriptCacheEntries,
    queueMode: services.queueMode,
    agent: (id) => agents.agent(id),
    channel: (id) => channels.byId.get(id),
    policy: metrics ? async (ctx) => watchedPolicy(await policy.forTurn(ctx), metrics) : (ctx) => policy.forTurn(ctx),
    ...(turnEnds.length > 0
      ? {
          onTurnEnd: (end: TurnEndFacts) => {
            for (const f of turnEnds) f(end);
          },
        }
      : {}),
    cancelApprovals: (turnId, reason) => broker.cancelTurn(turnId, reason),
    countTokens: { enabled: cfg.context.countTokens.enabled, margin: cfg.context.countTokens.margin },
    compaction: compactionSettings(cfg),
    compactionHooks: (fields, hookLog) => policy.compactionHooks(fields, hookLog),
    budgets: services.budgets.gate,
    deferral: deferralSettings(cfg.tools.deferral),
    instructions: new InstructionService({
      storage: inputs.storage,
      broker,
      settings: instructionSettingsOf(cfg),
      log: log.child({ component: 'instructions' }),
      ownWorkspaces: (agentId) => (Object.hasOwn(cfg.agents, agentId) ? cfg.agents[agentId]?.workspace.mode : 'per-person') !== 'shared',
    }),
  });
}

/** `context.compaction` as the engine takes it. */
function compactionSettings(cfg: Readonly<Config>): CompactionSettings {
  const c = cfg.context.compaction;
  return {
    auto: c.auto,
    threshold: c.threshold,
    keepTurns: c.keepTurns,
    ...(c.model ? { model: c.model } : {}),
    timeoutMs: c.timeout,
    maxReactivePerHour: c.maxReactivePerHour,
    summaryMaxTokens: c.summaryMaxTokens,
  };
}

/**
 * Where a person's message goes (packages/core/src/router.ts): the router, with the boundary gate
 * between its accept and admit.
 */
function buildRouting(inputs: DomainInputs, engine: TurnEngine): { router: Router; boundary: BoundaryService } {
  const { cfg, storage, channels } = inputs;
  const router: Router = new Router({
    defaultAgent: inputs.agents.defaultAgent,
    agents: Object.keys(cfg.agents),
    inboxMaxBytes: cfg.limits.inboxMaxBytes,
    storage,
    engine,
    gate: (message): Promise<AcceptResult> => boundary.accept(message),
    accepting: inputs.accepting,
    workspaces: inputs.workspaces,
  });
  const boundary: BoundaryService = new BoundaryService({
    storage,
    log: inputs.log.child({ component: 'boundary' }),
    settings: boundarySettings(cfg),
    pairing: pairingSettings(cfg),
    rateLimitWindow: cfg.audit.rateLimitWindow,
    channel: (id) => channels.byId.get(id),
    admit: (message): Promise<AcceptResult> => router.admit(message),
    ...(inputs.feed ? { onPairing: inputs.feed.pairing } : {}),
  });
  return { router, boundary };
}

/**
 * Session lanes across replicas (docs/adr/0010-replica-session-leases.md): on PostgreSQL a
 * session's turns run under its lease (`replicas.leaseTtl`), and orphaned sessions are looked for
 * every half lease, so a dead replica's turns resume within about one and a half leases. SQLite: none.
 */
function replicaLanes(inputs: DomainInputs): { replica?: ReplicaLaneSettings } {
  const { storage, replicaId, cfg } = inputs;
  if (storage.engine !== 'postgres' || !storage.sessionLeases || replicaId === undefined) return {};
  return { replica: { owner: replicaId, leaseTtlMs: cfg.replicas.leaseTtl, orphanScanMs: Math.floor(cfg.replicas.leaseTtl / 2) } };
}
