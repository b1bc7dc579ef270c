import { openSqliteStorage } from '@switchboard/store';
import { ScriptedModel, type Step } from '@switchboard/testkit';
import { type AnyTool, type ToolContext, defaultModelSpec } from '@switchboard/agent';
import { pino } from 'pino';
import { z } from 'zod';
import type {
  Channel,
  ConversationRef,
  EngineOptions,
  InboundMessage,
  RenderMeta,
  Route,
  Storage,
  TurnEvent,
  TurnPolicy,
  TurnPolicyContext,
} from '../src/index.js';
import { DeliveryLedger } from '../src/delivery-ledger.js';
import { TurnEngine } from '../src/engine.js';
import type { TurnFinishes } from '../src/turn-finishes.js';

/** Storage methods that only read; every other call is one write transaction (the Storage contract). */
const READS = new Set([
  'get',
  'list',
  'load',
  'loadFromBoundary',
  'loadTurn',
  'byName',
  'byHash',
  'byIdentity',
  'identities',
  'count',
  'unfinished',
  'nextQueued',
  'inbox',
  'seen',
  'summary',
  'ofTurn',
  'finalsSince',
  'heldSeen',
  'held',
  'expired',
]);

/**
 * Wraps a storage so every write call is recorded as `repo.method` in order — one entry per
 * transaction, since each write method is one transaction (or one autocommitted statement).
 */
export function countWrites(storage: Storage): { storage: Storage; writes: string[] } {
  const writes: string[] = [];
  const wrapped = new Proxy(storage, {
    get(target, repoName, receiver) {
      const repo: unknown = Reflect.get(target, repoName, receiver);
      if (typeof repoName !== 'string' || typeof repo !== 'object' || repo === null) return repo;
      return new Proxy(repo, {
        get(r, method, rr) {
          const fn: unknown = Reflect.get(r, method, rr);
          if (typeof fn !== 'function' || typeof method !== 'string' || READS.has(method)) return fn;
          return (...args: unknown[]) => {
            writes.push(`${repoName}.${method}`);
            return (fn as (...a: unknown[]) => unknown).apply(r, args);
          };
        },
      });
    },
  });
  return { storage: wrapped, writes };
}

/** One render call the fake channel received. */
export interface Render {
  to: ConversationRef;
  turnId: string;
  meta: RenderMeta;
  events: TurnEvent[];
  /** Resolves once the engine closed the stream. */
  done: Promise<void>;
}

/**
 * A channel that records every render and, like the real channels, ledgers the final part of a
 * turn's end through the core `DeliveryLedger` before its stream closes — marked `last` (so it is
 * stored with the turn's end) unless `markLast` is off.
 */
export class RecordingChannel implements Channel {
  readonly id = 'websocket:default';
  readonly type = 'websocket';
  readonly account = 'default';
  readonly required = false;
  readonly capabilities = { threads: false, edits: false, buttons: false, maxText: 10_000 };
  readonly renders: Render[] = [];
  private readonly waiters: Array<{ n: number; resolve: () => void }> = [];

  constructor(
    private readonly storage: () => Storage,
    private readonly finishes: () => TurnFinishes,
    private readonly markLast = true,
  ) {}

  async start(): Promise<void> {}
  health() {
    return { state: 'up' as const };
  }
  async stop(): Promise<void> {}
  async notify(): Promise<void> {}

  render(to: ConversationRef, turnId: string, turn: AsyncIterable<TurnEvent>, meta: RenderMeta): Promise<void> {
    const events: TurnEvent[] = [];
    const done = (async () => {
      const ledger = await new DeliveryLedger(this.storage().deliveries, { channel: to.channel, account: to.account }, this.finishes()).begin(turnId, to);
      for await (const ev of turn) {
        events.push(ev);
        if (ev.type === 'turn_end' && ev.reason !== 'steered') {
          await ledger.recordFinal(0, null, { text: ev.text, state: ev.state, reason: ev.reason }, { last: this.markLast });
        }
      }
    })();
    this.renders.push({ to, turnId, meta, events, done });
    for (const w of this.waiters.filter((x) => this.renders.length >= x.n)) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve();
    }
    return done;
  }

  /** The `n`-th render (1-based), once it started. */
  async nth(n: number): Promise<Render> {
    if (this.renders.length < n) await new Promise<void>((resolve) => this.waiters.push({ n, resolve }));
    return this.renders[n - 1]!;
  }

  /** The `turn_end` event of a finished render. */
  static end(render: Render): Extract<TurnEvent, { type: 'turn_end' }> | undefined {
    return render.events.find((e): e is Extract<TurnEvent, { type: 'turn_end' }> => e.type === 'turn_end');
  }
}

/** A promise with its resolve function (a gate a scripted step or a tool waits on). */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => {
    open = r;
  });
  return { promise, open };
}

/** A tool for the tests; `onCall` sees each call (and may hold it). */
export function testTool(name: string, readOnly: boolean, onCall: (input: { path: string }, ctx: ToolContext) => Promise<string>): AnyTool {
  return {
    name,
    description: `${name} (test)`,
    input: z.object({ path: z.string() }),
    readOnly,
    concurrencySafe: readOnly,
    call: async (input: { path: string }, ctx: ToolContext) => ({ content: await onCall(input, ctx) }),
  };
}

export interface Harness {
  engine: TurnEngine;
  storage: Storage;
  /** The raw storage (reads for assertions, not counted). */
  raw: Storage;
  writes: string[];
  model: ScriptedModel;
  channel: RecordingChannel;
  /** Reasons `afterTurn` was called with. */
  afterTurn: string[];
  cancelled: string[];
  route(principalId?: string): Route;
  send(dedupeKey: string, text: string, principalId?: string): Promise<{ turnId: string; sessionId: string }>;
}

/** The harness engine's default clock: a fixed instant. */
export const TEST_NOW = new Date('2026-12-01T21:23:45Z');
/** The text block the harness engine stamps into each turn's user entry (at {@link TEST_NOW}, UTC). */
export const TEST_STAMP = { type: 'text', text: 'Current time: 2026-12-01 21:23 UTC (Tuesday)' } as const;

/** An engine over SQLite `:memory:`, a scripted model and a recording channel. */
export function harness(opts: {
  steps?: Step[];
  tools?: AnyTool[];
  raw?: Storage;
  queueMode?: 'followup' | 'steer';
  policy?: (ctx: TurnPolicyContext, base: TurnPolicy) => TurnPolicy;
  /** Whether the channel marks the final part `last` (stored with the turn's end; default true). */
  markLast?: boolean;
  /** The model specs (limits and prices); default: the built-in defaults. */
  modelSpec?: EngineOptions['modelSpec'];
  /** The engine's clock (default: always {@link TEST_NOW}). */
  now?: () => Date;
  /** The agent's time zone (default: unset, so UTC). */
  timezone?: string;
  /** Told of every turn's end (metrics). */
  onTurnEnd?: EngineOptions['onTurnEnd'];
  /** Session lanes between replicas (the storage must have session leases: PostgreSQL). */
  replica?: EngineOptions['replica'];
  /** Told when a turn was cut off by a storage outage. */
  onStorageOutage?: EngineOptions['onStorageOutage'];
}): Harness {
  const raw = opts.raw ?? openSqliteStorage({ file: ':memory:' });
  const { storage, writes } = countWrites(raw);
  const model = new ScriptedModel(opts.steps ?? []);
  let engine: TurnEngine | undefined;
  const channel = new RecordingChannel(
    () => storage,
    () => engine!.finishes,
    opts.markLast ?? true,
  );
  const afterTurn: string[] = [];
  const cancelled: string[] = [];
  const options: EngineOptions = {
    storage,
    log: pino({ level: 'silent' }),
    model,
    modelName: 'test-model',
    maxTokens: 256,
    modelSpec: opts.modelSpec ?? defaultModelSpec,
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
    toolTimeoutMs: 10_000,
    maxContinuations: 0,
    queueMode: () => opts.queueMode ?? 'followup',
    agent: (id) => ({
      id,
      system: [{ type: 'text', text: 'You are a test.' }],
      tools: opts.tools ?? [],
      maxTurns: 8,
      workspace: '/nonexistent',
      ...(opts.timezone ? { timezone: opts.timezone } : {}),
    }),
    now: opts.now ?? (() => TEST_NOW),
    channel: (id) => (id === channel.id ? channel : undefined),
    policy: async (ctx) => {
      const base: TurnPolicy = {
        tools: opts.tools ?? [],
        canUseTool: async () => ({ behavior: 'allow' }),
        afterTurn: async (reason) => {
          afterTurn.push(reason);
        },
      };
      return opts.policy ? opts.policy(ctx, base) : base;
    },
    cancelApprovals: async (turnId) => {
      cancelled.push(turnId);
    },
    ...(opts.onTurnEnd ? { onTurnEnd: opts.onTurnEnd } : {}),
    ...(opts.replica ? { replica: opts.replica } : {}),
    ...(opts.onStorageOutage ? { onStorageOutage: opts.onStorageOutage } : {}),
  };
  engine = new TurnEngine(options);
  const route = (principalId = 'p1'): Route => ({
    agentId: 'main',
    key: { agent: 'main', channel: 'websocket', account: 'default', scope: 'dm', principalId },
    clientId: null,
  });
  const send = async (dedupeKey: string, text: string, principalId = 'p1') => {
    const res = await engine.accept(message(dedupeKey, text, principalId), route(principalId));
    if (!res.turnId || !res.sessionId) throw new Error(`not accepted: ${JSON.stringify(res)}`);
    return { turnId: res.turnId, sessionId: res.sessionId };
  };
  return { engine: engine as TurnEngine, storage, raw, writes, model, channel, afterTurn, cancelled, route, send };
}

/** A WebSocket DM from a principal. */
export function message(dedupeKey: string, text: string, principalId = 'p1'): InboundMessage {
  return {
    dedupeKey,
    channel: 'websocket',
    account: 'default',
    conversation: { channel: 'websocket', account: 'default', id: principalId, kind: 'dm' },
    sender: { identity: `ws:${principalId}`, isBot: false },
    kind: 'dm',
    mentioned: false,
    text,
    platformId: dedupeKey,
    receivedAt: new Date(0),
    principalId,
  };
}

/** Text of an assistant step. */
export const say = (text: string): Step => ({ content: [{ type: 'text', text }] });
