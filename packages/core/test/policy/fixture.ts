import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent, ModelClient, ToolContext } from '@switchboard/agent';
import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import pino from 'pino';
import { afterEach, beforeEach } from 'vitest';
import {
  ApprovalBroker,
  type BoundaryPolicy,
  CapabilityRegistry,
  DEFAULT_AUTO_CLASSIFIER,
  type HooksConfig,
  type InboundMessage,
  LiveSettings,
  PolicyService,
  type PolicySettings,
  type Role,
  type SessionKey,
  type TurnPolicy,
  type TurnPolicyContext,
  WorkspaceDirectories,
  type WorkspaceMode,
} from '../../src/index.js';
import { editFile, fileTool, readFile, sendMail, writeFile } from '../permissions/fixtures.js';

/** The tools every test agent offers: the five built-in file tools and one MCP tool. */
export const TOOLS = [readFile, fileTool('list_files', true), fileTool('search_files', true), writeFile, editFile, sendMail];

/** Settings with no rules, no gateway mode, one `default` agent in `default` mode and the default role ceilings. */
export function baseSettings(overrides: Partial<PolicySettings> = {}): PolicySettings {
  return {
    rules: { allow: [], ask: [], deny: [] },
    agents: new Map([['default', { mode: 'default', rules: { allow: [], ask: [], deny: [] } }]]),
    roleCeilings: { owner: 'bypassPermissions', admin: 'acceptEdits', member: 'acceptEdits', guest: 'default' },
    auto: { model: 'classifier-model', ...DEFAULT_AUTO_CLASSIFIER },
    ...overrides,
  };
}

/** A channel account's boundary policy (an allowlist DM account with the given rooms and mode). */
export function boundaryPolicy(groups: BoundaryPolicy['groups'] = {}, permissionMode: BoundaryPolicy['permissionMode'] = null): BoundaryPolicy {
  return {
    dmPolicy: 'allowlist',
    allowFrom: [],
    groupPolicy: 'allowlist',
    groups,
    requireMention: false,
    rateLimit: { burst: 10, perMinute: 20 },
    pairingRole: 'member',
    permissionMode,
  };
}

/** What one policy test builds the service from; every field has a default. */
export interface PolicyFixtureOptions {
  settings?: PolicySettings;
  hooks?: HooksConfig;
  denialLimits?: { consecutive: number; total: number };
  /** Boundary policies by channel id (`websocket:default`). */
  boundary?: ReadonlyMap<string, BoundaryPolicy>;
  workspaceMode?: WorkspaceMode;
  /** `capabilities.offeredTo` overrides for the registry the service reads `offeredTo` from. */
  offeredTo?: ReadonlyMap<string, readonly Role[]>;
  /** The model client the auto-mode classifier calls. */
  model?: ModelClient;
}

/** One turn's policy and everything it emitted. */
export interface BuiltTurn {
  policy: TurnPolicy;
  ctx: TurnPolicyContext;
  events: AgentEvent[];
  /** Resolves with the next event of `type` the turn emits. */
  next(type: AgentEvent['type']): Promise<AgentEvent>;
  /** A tool context for a call in this turn's workspace. */
  toolCtx(toolUseId?: string): ToolContext;
}

/**
 * A turn policy over a real `:memory:` store, a real approval broker and real workspace
 * directories under a temporary root: build it with `setup(...)` inside a test.
 */
export function usePolicy() {
  let storage: SqliteStorage;
  let broker: ApprovalBroker;
  let root: string;
  let service: PolicyService | undefined;
  let settings: LiveSettings<PolicySettings>;
  beforeEach(() => {
    storage = openSqliteStorage({ file: ':memory:' });
    broker = new ApprovalBroker({ storage, log: pino({ level: 'silent' }), timeoutMs: 60_000, selfApproveRoles: ['owner', 'admin', 'member'] });
    root = mkdtempSync(join(tmpdir(), 'swb-policy-'));
  });
  afterEach(() => {
    service?.grants.close();
    service = undefined;
    broker.close();
    storage.close();
    rmSync(root, { recursive: true, force: true });
  });

  const env = {
    get storage() {
      return storage;
    },
    get broker() {
      return broker;
    },
    get root() {
      return root;
    },
    get settings() {
      return settings;
    },
    /** The service the last `setup()` built. */
    get service(): PolicyService {
      if (!service) throw new Error('call setup() first');
      return service;
    },
    /** Builds the service (once per test). */
    setup(options: PolicyFixtureOptions = {}): PolicyService {
      settings = new LiveSettings(options.settings ?? baseSettings());
      const registry = new CapabilityRegistry({
        tools: TOOLS,
        mcpServers: ['mail'],
        channels: [],
        model: { name: 'm', baseUrl: '', apiKey: '' },
        hooks: options.hooks ?? {},
        ...(options.offeredTo ? { offeredTo: options.offeredTo } : {}),
      });
      const workspaceMode = options.workspaceMode ?? 'per-person';
      service = new PolicyService({
        settings,
        storage,
        broker,
        log: pino({ level: 'silent' }),
        scrub: (text) => text.replaceAll('hunter2', '[secret]'),
        hooks: { config: options.hooks ?? {}, env: { PATH: '/usr/bin:/bin' }, defaultTimeoutMs: 10_000 },
        denialLimits: options.denialLimits ?? { consecutive: 3, total: 20 },
        sessionGrantTtlMs: 3_600_000,
        protectedFiles: { databaseFile: join(root, 'switchboard.db') },
        expandRule: (rule) => registry.expandRule(rule),
        offeredTo: (tool) => registry.offeredTo(tool),
        boundaryPolicy: async (channelId) => options.boundary?.get(channelId) ?? null,
        workspaces: new WorkspaceDirectories({ root, modeOf: () => workspaceMode }),
        ...(options.model ? { model: options.model } : {}),
      });
      return service;
    },
    /** A principal with this role. */
    async principal(role: 'owner' | 'admin' | 'member' | 'guest', name = `${role}-${Math.random().toString(36).slice(2, 8)}`): Promise<string> {
      return (await storage.principals.create({ name, role })).id;
    },
    /** Accepts a message (a DM from `principalId`, or a room message) and builds its turn's policy. */
    async turn(message: { principalId?: string; room?: string; text?: string; agentTools?: typeof TOOLS }): Promise<BuiltTurn> {
      if (!service) throw new Error('call setup() first');
      const room = message.room;
      const conversation = room
        ? { channel: 'websocket', account: 'default', id: room, kind: 'room' as const }
        : { channel: 'websocket', account: 'default', id: message.principalId ?? 'anon', kind: 'dm' as const };
      const inbound: InboundMessage = {
        dedupeKey: `m-${Math.random().toString(36).slice(2)}`,
        channel: 'websocket',
        account: 'default',
        conversation,
        sender: { identity: `ws:${message.principalId ?? 'anon'}`, isBot: false },
        kind: conversation.kind,
        mentioned: true,
        text: message.text ?? 'hello',
        platformId: 'p',
        receivedAt: new Date(),
        ...(message.principalId ? { principalId: message.principalId } : {}),
      };
      const key: SessionKey = room
        ? { agent: 'default', channel: 'websocket', account: 'default', scope: 'room', conversation: room }
        : { agent: 'default', channel: 'websocket', account: 'default', scope: 'dm', principalId: message.principalId ?? '' };
      const accepted = await storage.turns.accept(inbound, { key, clientId: inbound.dedupeKey });
      const turn = await storage.turns.get(accepted.turnId ?? '');
      if (!turn) throw new Error('the message got no turn');
      const session = await storage.sessions.resolve(key);
      const events: AgentEvent[] = [];
      const waiting: Array<{ type: AgentEvent['type']; resolve: (ev: AgentEvent) => void }> = [];
      const ctx: TurnPolicyContext = {
        session,
        turn,
        message: inbound,
        agent: { id: 'default', system: [], tools: message.agentTools ?? TOOLS, maxTurns: 5, workspace: join(root, 'unused') },
        emit: (ev) => {
          events.push(ev);
          const i = waiting.findIndex((w) => w.type === ev.type);
          if (i >= 0) waiting.splice(i, 1)[0]?.resolve(ev);
        },
      };
      const policy = await service.forTurn(ctx);
      return {
        policy,
        ctx,
        events,
        next: (type) => new Promise((resolve) => waiting.push({ type, resolve })),
        toolCtx: (toolUseId = 'toolu_1') => ({
          signal: new AbortController().signal,
          toolUseId,
          sessionId: session.id,
          turnId: turn.id,
          agentId: 'default',
          workspace: policy.workspace ?? '',
        }),
      };
    },
  };
  return env;
}
