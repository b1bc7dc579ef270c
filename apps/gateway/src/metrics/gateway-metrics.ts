import type { ApprovalStatus, Channel, Storage, TurnEndFacts } from '@switchboard/core';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** What the scrape-time gauges read: the store (so a restart shows the truth), the channels and the engine. */
export interface MetricsSources {
  storage: Storage;
  channels: readonly Channel[];
  /** Turns running now (`TurnEngine.active`); read at scrape time, so the engine may be built later. */
  activeTurns(): number;
}

/** A model call's tokens by kind, as {@link GatewayMetrics.modelCall} counts them. */
export interface CallTokens {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

/** How a tool use ended, as `switchboard_tool_calls_total` labels it. */
export type ToolOutcome = 'ok' | 'error' | 'denied';

const TURN_SECONDS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const MODEL_SECONDS = [0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120];
const HEALTH_VALUE = { starting: 0, down: 0, degraded: 1, up: 2 } as const;
// The store is asked for at most this many pending approvals per scrape (the gauge says "at least" beyond it).
const PENDING_APPROVALS_CAP = 10_000;

/**
 * The gateway's Prometheus metrics (docs/metrics.md), on a registry of its own (never prom-client's
 * global one, so several gateways in one process do not collide). Every label is bounded: channel
 * types and accounts, agent ids, models and tools come from the config and the registry, outcomes
 * from closed lists — never a person, a session or free text. Counters move with the events the
 * gateway already has (a turn's end, a model call, a permission decision, an approval's claim);
 * gauges of stored state are read from the store at scrape time.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly turns: Counter<'channel' | 'account' | 'outcome'>;
  private readonly turnSeconds: Histogram<'channel' | 'outcome'>;
  private readonly modelSeconds: Histogram<'model' | 'outcome'>;
  private readonly tokens: Counter<'model' | 'kind'>;
  private readonly cost: Counter<'model'>;
  private readonly tools: Counter<'tool' | 'outcome'>;
  private readonly denials: Counter<'tool' | 'kind'>;
  private readonly approvals: Counter<'outcome'>;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.turns = new Counter({
      name: 'switchboard_turns_total',
      help: 'Turns ended, by channel type, account and outcome (the terminal reason).',
      labelNames: ['channel', 'account', 'outcome'],
      registers,
    });
    this.turnSeconds = new Histogram({
      name: 'switchboard_turn_duration_seconds',
      help: 'How long a turn ran in this process, from its start to its end, by channel type and outcome.',
      labelNames: ['channel', 'outcome'],
      buckets: TURN_SECONDS,
      registers,
    });
    this.modelSeconds = new Histogram({
      name: 'switchboard_model_call_duration_seconds',
      help: 'How long one model request took, streamed to its end, by requested model and outcome (ok, error).',
      labelNames: ['model', 'outcome'],
      buckets: MODEL_SECONDS,
      registers,
    });
    this.tokens = new Counter({
      name: 'switchboard_model_tokens_total',
      help: 'Model tokens by requested model and kind (input, output, cache_read, cache_write).',
      labelNames: ['model', 'kind'],
      registers,
    });
    this.cost = new Counter({
      name: 'switchboard_model_cost_usd_total',
      help: 'What model calls cost in USD, at the configured prices, by requested model.',
      labelNames: ['model'],
      registers,
    });
    this.tools = new Counter({
      name: 'switchboard_tool_calls_total',
      help: 'Tool calls by tool and outcome: ok and error (the tool ran), denied (the permission pipeline refused it).',
      labelNames: ['tool', 'outcome'],
      registers,
    });
    this.denials = new Counter({
      name: 'switchboard_tool_denials_total',
      help: 'Denied tool calls by tool and by what denied them (person, rule, mode, hook, safety, limit).',
      labelNames: ['tool', 'kind'],
      registers,
    });
    this.approvals = new Counter({
      name: 'switchboard_approvals_decided_total',
      help: 'Approvals decided, by outcome (allowed, denied, expired, cancelled).',
      labelNames: ['outcome'],
      registers,
    });
    registerStoredGauges(registers, sources);
  }

  /** A turn ended (`EngineOptions.onTurnEnd`). */
  readonly turnEnded = (end: TurnEndFacts): void => {
    this.turns.inc({ channel: end.channel, account: end.account, outcome: end.reason });
    this.turnSeconds.observe({ channel: end.channel, outcome: end.reason }, end.durationMs / 1000);
  };

  /** One model request ended: its latency, and its tokens and cost when it answered. */
  modelCall(model: string, seconds: number, answered: { tokens: CallTokens; costUsd: number } | null): void {
    this.modelSeconds.observe({ model, outcome: answered ? 'ok' : 'error' }, seconds);
    if (!answered) return;
    const t = answered.tokens;
    this.tokens.inc({ model, kind: 'input' }, t.inputTokens);
    this.tokens.inc({ model, kind: 'output' }, t.outputTokens);
    this.tokens.inc({ model, kind: 'cache_read' }, t.cacheReadInputTokens);
    this.tokens.inc({ model, kind: 'cache_write' }, t.cacheCreationInputTokens);
    this.cost.inc({ model }, answered.costUsd);
  }

  /** A tool call ended (ran, or was denied); `deniedBy` is the denial's kind. */
  toolCall(tool: string, outcome: ToolOutcome, deniedBy?: string): void {
    this.tools.inc({ tool, outcome });
    if (outcome === 'denied') this.denials.inc({ tool, kind: deniedBy ?? 'unknown' });
  }

  /** An approval was decided (`ApprovalBrokerOptions.onDecided`). */
  readonly approvalDecided = (status: Exclude<ApprovalStatus, 'pending'>): void => {
    this.approvals.inc({ outcome: status });
  };

  /** The exposition text of every metric (Prometheus text format 0.0.4). */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  /** The content type of {@link scrape}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The gauges whose value lives in the store, the channels or the engine: read at each scrape. */
function registerStoredGauges(registers: Registry[], sources: MetricsSources): void {
  const { storage, channels } = sources;
  new Gauge({
    name: 'switchboard_turns_active',
    help: 'Turns running now.',
    registers,
    collect() {
      this.set(sources.activeTurns());
    },
  });
  new Gauge({
    name: 'switchboard_approvals_pending',
    help: 'Approvals waiting for a decision (from the store).',
    registers,
    async collect() {
      this.set((await storage.approvals.list({ status: 'pending', limit: PENDING_APPROVALS_CAP })).length);
    },
  });
  new Gauge({
    name: 'switchboard_pairing_requests_pending',
    help: 'Pairing requests waiting for an operator, by channel type and account (from the store).',
    labelNames: ['channel', 'account'],
    registers,
    async collect() {
      this.reset();
      // Every running account shows, with 0 when none is pending.
      for (const c of channels) this.set({ channel: c.type, account: c.account }, 0);
      for (const r of await storage.pairing.list({ status: 'pending' })) this.inc({ channel: r.channel, account: r.account });
    },
  });
  new Gauge({
    name: 'switchboard_channel_health',
    help: "Each channel account's health: 2 up, 1 degraded (working, with recent failures), 0 down or starting.",
    labelNames: ['channel', 'account'],
    registers,
    collect() {
      for (const c of channels) this.set({ channel: c.type, account: c.account }, HEALTH_VALUE[c.health().state]);
    },
  });
  new Gauge({
    name: 'switchboard_inbox_dead_letters',
    help: 'Inbound items given up on after bounded attempts (from the store; GET /api/v1/inbox/dead-letters lists them).',
    registers,
    async collect() {
      this.set(await storage.deadLetters.count());
    },
  });
}
