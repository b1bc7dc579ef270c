import {
  query,
  type AgentEvent,
  type AnyTool,
  type CanUseTool,
  DEFAULT_MICROCOMPACT,
  type MicrocompactSettings,
  type ModelClient,
  type ModelSpecLookup,
  type PathFilter,
  type QueryParams,
  type QueryResult,
  type ResultBudgets,
  type RetryPolicy,
  type SystemBlock,
  type Usage,
} from '@switchboard/agent';
import type { Logger } from 'pino';
import { isSwbError, SwbErrorCode } from './errors.js';
import { AsyncQueue } from './async-queue.js';
import type { AcceptResult, Channel, InboundMessage, TurnEvent } from './channel.js';
import type { SessionKey } from './session-key.js';
import type { NewEntry, Session, Storage, Turn, TurnUsage } from './storage.js';
import { contextMeter, meterShaper, TokenEstimators } from './context/meter.js';
import { contextReport, type ContextReport } from './context/context-report.js';
import { type CountTokensSettings, turnCounting } from './context/exact-count.js';
import { microcompactForTurn } from './context/microcompact-shaper.js';
import { EngineCompaction, type ManualCompactResult } from './context/compaction-engine.js';
import { type CompactionHooks, type CompactionSettings, DEFAULT_COMPACTION } from './context/compaction-run.js';
import type { HookTurnFields } from './permissions/hooks.js';
import type { PermissionMode } from './permissions/modes.js';
import type { BudgetGate } from './budgets/gate.js';
import { TranscriptCache } from './transcript-cache.js';
import { isLeaseLost, type ReplicaLaneSettings, SessionLanes } from './session-lanes.js';
import { turnText } from './transcript.js';
import { cancelledBecause, endStateOf, type TurnEndReason, type TurnEndState } from './turn-end.js';
import { TurnFinishes } from './turn-finishes.js';
import { TurnJournal } from './turn-journal.js';
import { countUsage, DurabilityRule, emptyUsage, entryOf, logLoopEvent } from './turn-loop.js';
import { danglingResults, turnStart, type TurnStart } from './turn-resume.js';
import { usageRecordOf } from './usage.js';
import { turnStamp } from './turn-stamp.js';
import { DEFAULT_DEFERRAL, type DeferralSettings, loadedToolNames, TurnToolOffer } from './tool-deferral/index.js';
import type { TurnInstructionSource } from './instructions/service.js';
import { sendFileFor } from './send-file.js';
import { userContent } from './inbound-images.js';
import type { SkillRun } from './skills/skill-run.js';
import { skillsLoadedInTurn } from './skills/resume.js';
import type { SubagentRunner } from './subagents/runner.js';

export { countUsage } from './turn-loop.js';

/** What one agent runs with. */
export interface AgentRuntime {
  id: string;
  system: SystemBlock[];
  tools: AnyTool[];
  maxTurns: number;
  workspace: string;
  /** The IANA time zone of the date and time stamped into each turn's user entry (default `UTC`). */
  timezone?: string;
}

export interface EngineOptions {
  /** Told when a turn or lane was cut off by a storage outage (`SWB_E_STORAGE_UNAVAILABLE`): call {@link TurnEngine.resumeInterrupted} once the database answers. */
  onStorageOutage?: () => void;
  /** Images people send reach the model as image blocks (the model accepts images); default false: their path only. */
  imageBlocks?: boolean;
  storage: Storage;
  log: Logger;
  model: ModelClient;
  modelName: string;
  fallbackModel?: string;
  maxTokens: number;
  /**
   * The limits and prices of a model by name (total: unknown names get a generic default). A tool
   * call cut at `maxTokens` is retried once with the primary model's `maxOutputTokens`.
   */
  modelSpec: ModelSpecLookup;
  retry: RetryPolicy;
  toolTimeoutMs: number;
  toolTimeouts?: Readonly<Record<string, number>>;
  maxContinuations: number;
  /** Sessions whose transcripts stay in memory (least recently used out). */
  transcriptCacheSize?: number;
  /** Transcript entries kept in memory over all sessions at most. */
  transcriptCacheEntries?: number;
  /** How a message that arrives during a running turn is handled, for this session. */
  queueMode(session: Session, channelId: string): 'followup' | 'steer';
  agent(agentId: string): AgentRuntime;
  channel(channelId: string): Channel | undefined;
  /** What one turn may do: its tools, its permission decisions and its hooks (see TurnPolicy). */
  policy(ctx: TurnPolicyContext): Promise<TurnPolicy>;
  /**
   * Cancels the pending approvals of a turn that ends (see `ApprovalBroker.cancelTurn`); called
   * before the turn's end is rendered. Not called for a turn suspended by shutdown.
   */
  cancelApprovals?(turnId: string, reason: string): Promise<unknown>;
  /** The clock of the date and time stamped into each turn's user entry (default: the system clock). */
  now?: () => Date;
  /** Exact token counts near the shapers' thresholds (`context.countTokens`; default on, margin 0.1). */
  countTokens?: CountTokensSettings;
  /** The tool-result budget of every turn (default `DEFAULT_RESULT_BUDGETS`). */
  resultBudgets?: ResultBudgets;
  /** Microcompact's threshold and kept turns (default `DEFAULT_MICROCOMPACT`). */
  microcompact?: MicrocompactSettings;
  /** `context.compaction` (default {@link DEFAULT_COMPACTION}); see docs/context.md. */
  compaction?: CompactionSettings;
  /** The PreCompact / PostCompact hooks of one compaction (`PolicyService.compactionHooks`). */
  compactionHooks?: (fields: HookTurnFields, log: Logger) => CompactionHooks;
  /** The budget check before each model call (budgets/gate.ts); absent or without budgets: none. */
  budgets?: BudgetGate;
  /** `tools.deferral`: deferred tool schemas and `tool_search` (default {@link DEFAULT_DEFERRAL}); see docs/tools.md. */
  deferral?: DeferralSettings;
  /** Layered instructions (instructions/service.ts): each turn's system prompt, the profile's time zone, nested AGENTS.md notes. Absent: the agent's `system`. */
  instructions?: TurnInstructionSource;
  /** Runs the `task` tool's subagents (docs/subagents.md); absent: `task` answers that subagents are not available. */
  subagents?: SubagentRunner;
  /**
   * Told of every turn's end the moment it is decided, before its end is rendered (metrics).
   * Contract: must not throw (a throw is logged and ignored). Not called for a turn suspended by
   * shutdown (it resumes later) nor for a message steered into another turn.
   */
  onTurnEnd?(end: TurnEndFacts): void;
  /**
   * Replicas on one PostgreSQL (`storage.sessionLeases` must exist): a session's turns run here
   * only under its lease, and orphaned sessions are resumed (see `SessionLanes`). Absent: one
   * gateway, no leases.
   */
  replica?: ReplicaLaneSettings;
}

/** What {@link EngineOptions.onTurnEnd} is told: bounded facts only (no ids, no text). */
export interface TurnEndFacts {
  /** The channel type the message came in on (`websocket`, `telegram`, …). */
  channel: string;
  /** The channel account. */
  account: string;
  agentId: string;
  state: TurnEndState;
  reason: TurnEndReason;
  /** From the moment this process began running the turn to its end. */
  durationMs: number;
}

export interface TurnPolicyContext {
  session: Session;
  turn: Turn;
  message: InboundMessage;
  agent: AgentRuntime;
  /** Sends an event to the turn's renderer (approval requests). */
  emit(ev: AgentEvent): void;
  /** Records a model call the policy made (the auto-mode classifier): counted in the turn's usage, stored as a usage row, checked by budgets. */
  recordCall?(usage: Usage, model: string): void;
}

/** The per-turn decisions the gateway plugs into the loop. */
export interface TurnPolicy {
  /** The tools offered to the model (after the pre-filter). */
  tools: AnyTool[];
  canUseTool: CanUseTool;
  afterTool?: QueryParams['afterTool'];
  shouldStop?: QueryParams['shouldStop'];
  /** Before the first model call: a string refuses the turn with that message (UserPromptSubmit hooks). */
  beforeTurn?(): Promise<string | undefined>;
  /** After the turn ends (Stop hooks), with why it ended. Must not throw. */
  afterTurn?(reason: TurnEndReason): Promise<void>;
  /** The directory this turn's file tools work in (default: the agent's `workspace`). */
  workspace?: string;
  /** Which entries a walking tool may return (see `ToolContext.pathFilter`). */
  pathFilter?: PathFilter;
  /** The speaker's principal, passed to tools as `ToolContext.principalId` (memory). */
  principalId?: string;
  /** The turn answers a message in a room session: passed to tools as `ToolContext.roomSession`. */
  roomSession?: boolean;
  /**
   * The turn's skills (one run object per turn, so a skill's narrowing ends with the turn): listed
   * after the turn's system prompt, passed to tools as `ToolContext.skills`. Absent: no skills.
   */
  skills?: SkillRun;
  /** The permission mode in force for this turn (absent: the policy does not say). */
  mode?: PermissionMode;
  /**
   * The permission seam of one subagent of this turn (docs/subagents.md): the same rules, scopes,
   * hooks and approvers; its mode is the turn's, lowered to `mode` when given (`lowerMode`: never
   * above the turn's); asks and the audit name the subagent by `label` (`<type>: <description>`).
   * Absent: the turn's `canUseTool` serves its subagents as is.
   */
  forSubagent?(sub: { label: string; mode?: PermissionMode }): { canUseTool: CanUseTool; mode: PermissionMode };
}

/** Who sent a message and where it goes: resolved from the inbound message, never from the model. */
export interface Route {
  agentId: string;
  key: SessionKey;
  clientId: string | null;
}

const SHUTDOWN = Symbol('shutdown');
/** A turn stopped because this replica lost its session lease: the replica that took it resumes the turn. */
const LEASE_LOST = Symbol('lease lost');

/**
 * Whether a turn's signal was aborted to suspend it for shutdown (it resumes at the next start),
 * or because this replica lost the session's lease (another replica resumes it): what it waits
 * for (an approval) is still pending, not ended.
 */
export function suspendedForShutdown(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason === SHUTDOWN || signal.reason === LEASE_LOST);
}

interface Lane {
  again: boolean;
  done: Promise<void>;
}

interface Pending {
  turnId: string;
  text: string;
  channelId: string;
}

interface Running {
  turnId: string;
  /** The principal whose message the turn answers (null: a sender without one). */
  principalId: string | null;
  controller: AbortController;
  /** Messages waiting to be injected at the next model call (steer). */
  pending: Pending[];
  /** Messages the loop took at its last model call, not yet persisted. */
  drained: Pending[];
  /** The turn is ending: only its end is recorded and delivered now. */
  ending: boolean;
  /** Settles once the turn is no longer running here ({@link Running.settleEnded}). */
  ended: Promise<void>;
  settleEnded(): void;
}

/** One turn while it runs: what it answers, where its events go and how it writes. */
interface ActiveTurn {
  turn: Turn;
  session: Session;
  message: InboundMessage;
  /** The agent that answers (one lookup per turn: its policy and its loop see the same runtime). */
  agent: AgentRuntime;
  /** The turn continues one a previous process started (state was not `queued`). */
  resumed: boolean;
  log: Logger;
  /** Events for the channel's renderer. */
  queue: AsyncQueue<TurnEvent>;
  /** The channel's render of `queue` (settles, never rejects). */
  rendering: Promise<void>;
  run: Running;
  journal: TurnJournal;
  usage: TurnUsage;
  /** When this process began running the turn (`performance.now()`). */
  startedAt: number;
}

/** A turn's end as the engine records and renders it. */
interface TurnEnd {
  state: TurnEndState;
  reason: TurnEndReason;
  error?: string;
  /** Recorded with the end; absent: the stored usage stays. */
  usage?: TurnUsage;
}

const INTERNAL_ERROR = 'The gateway hit an internal error while answering. Please try again.';

/**
 * Runs turns: one at a time per session (a lane), sessions in parallel. A turn's writes are
 * batched (see TurnJournal): what a restart needs is stored before the loop goes on — a tool call
 * about to be checked or run, a side effect's result — and the rest is stored with the turn's
 * end, so a plain text turn costs one write after its accept (plus the channel's ledger row).
 */
export class TurnEngine {
  private readonly lanes = new Map<string, Lane>();
  /** Running turns by session id. */
  private readonly running = new Map<string, Running>();
  private readonly resumable = new Map<string, Turn[]>();
  private stopping = false;
  private readonly transcripts: TranscriptCache;
  /** Chars-per-token estimates per model, calibrated by every call of every turn. */
  private readonly estimators = new TokenEstimators();
  /**
   * The turns whose end waits for their last final part (give it to the channels' delivery
   * ledgers): a delivered text turn stores its end and that part's ledger row in one transaction.
   */
  readonly finishes = new TurnFinishes();
  /** Auto, reactive and manual compaction, with the circuit breaker shared by all turns. */
  private readonly compaction: EngineCompaction;
  /** Manual compactions in progress by session: the session's next turn waits for it. */
  private readonly compactions = new Map<string, Promise<void>>();
  /** Session leases between replicas (`options.replica`); null for a single gateway. */
  private readonly replica: SessionLanes | null = null;
  /** Sessions whose lease this replica lost while their lane ran: the lane stops. */
  private readonly lost = new Set<string>();

  constructor(private readonly options: EngineOptions) {
    this.transcripts = new TranscriptCache(options.storage, options.transcriptCacheSize ?? 256, options.transcriptCacheEntries ?? 50_000);
    if (options.replica) {
      const leases = options.storage.sessionLeases;
      if (!leases) throw new Error('replica session lanes need a storage with session leases (storage.kind "postgres")');
      const lanes = new SessionLanes(leases, options.replica, this.transcripts, options.log.child({ component: 'session-lanes' }));
      this.replica = lanes;
      this.transcripts.fence = (sessionId) => lanes.fence(sessionId);
    }
    this.compaction = new EngineCompaction({
      settings: options.compaction ?? DEFAULT_COMPACTION,
      model: options.model,
      primaryModel: options.modelName,
      modelSpec: options.modelSpec,
      estimators: this.estimators,
      storage: options.storage,
      transcripts: this.transcripts,
      log: options.log,
      ...(options.compactionHooks ? { hooks: options.compactionHooks } : {}),
    });
  }

  /**
   * Compacts a session now (`/compact`, the control API): `busy` while one of its turns runs or is
   * unfinished (not queued behind it); a turn that arrives meanwhile waits for the compaction, then runs.
   */
  async compact(session: Session, request: { instructions?: string; principalId: string | null }): Promise<ManualCompactResult> {
    // A turn that is only delivering its end (the person saw the answer) is waited for.
    const run = this.running.get(session.id);
    if (run?.ending) await run.ended;
    if (this.stopping || this.running.has(session.id) || this.compactions.has(session.id)) return { outcome: 'busy' };
    if ((await this.options.storage.turns.unfinished()).some((t) => t.sessionId === session.id)) return { outcome: 'busy' };
    // A turn may have started while the store was asked.
    if (this.running.has(session.id) || this.compactions.has(session.id)) return { outcome: 'busy' };
    // Replicas: the compaction writes the session's transcript, so it holds the session's lease meanwhile.
    if (this.replica && (this.lanes.has(session.id) || !(await this.replica.hold(session.id, () => undefined)))) return { outcome: 'busy' };
    const work = this.compaction.manual({ session, agent: this.options.agent(session.agentId), ...request });
    this.compactions.set(
      session.id,
      work.then(
        () => undefined,
        () => undefined,
      ),
    );
    try {
      return await work;
    } finally {
      this.compactions.delete(session.id);
      if (this.replica) {
        await this.replica.release(session.id);
        // A message that came meanwhile found the lease taken: its turn runs now.
        this.kick(session.id);
      }
    }
  }

  /** Durably accepts an inbound message and schedules its turn. */
  async accept(message: InboundMessage, route: Route): Promise<AcceptResult> {
    const res = await this.options.storage.turns.accept(message, { key: route.key, clientId: route.clientId });
    if (res.duplicate || !res.sessionId || !res.turnId) return res;
    const run = this.running.get(res.sessionId);
    if (run && canSteer(run, message)) {
      const session = await this.options.storage.sessions.get(res.sessionId);
      const channelId = `${message.channel}:${message.account}`;
      // Steer: the running turn takes the message at its next model call. If it makes no further
      // call, the queued turn simply runs next (followup).
      if (session && this.options.queueMode(session, channelId) === 'steer') run.pending.push({ turnId: res.turnId, text: message.text, channelId });
    }
    this.kick(res.sessionId);
    return res;
  }

  /**
   * After a storage outage (the database answers again): resumes the unfinished turns this
   * process is not running — the turns an outage cut off (still `running` in the store) and the
   * messages queued behind them. A session whose lane is busy with another turn takes them next.
   * Returns how many turns it handed to lanes.
   */
  async resumeInterrupted(): Promise<number> {
    if (this.stopping) return 0;
    const turns = (await this.options.storage.turns.unfinished()).filter(
      (t) => this.running.get(t.sessionId)?.turnId !== t.id && !this.resumable.get(t.sessionId)?.some((r) => r.id === t.id),
    );
    for (const t of turns) {
      if (t.state === 'queued') continue;
      // The cache may miss (or hold) a write whose commit the outage left unknown: read the store again.
      if (!this.running.has(t.sessionId)) this.transcripts.drop(t.sessionId);
      const list = this.resumable.get(t.sessionId) ?? [];
      list.push(t);
      this.resumable.set(t.sessionId, list);
    }
    for (const s of new Set(turns.map((t) => t.sessionId))) this.kick(s);
    return turns.length;
  }

  /**
   * Resumes every unfinished turn found at start-up, in order, per session. Replicas: starts the
   * orphan scan instead (sessions with unfinished work whose lease nobody holds), which also
   * resumes what a replica that died or left had running; returns how many sessions it found now.
   */
  async resumeAll(): Promise<number> {
    if (this.replica) {
      const { leaseTtlMs, owner } = this.options.replica!;
      const orphans = await this.options.storage.sessionLeases!.orphans(leaseTtlMs, owner);
      for (const s of orphans) this.kick(s);
      this.replica.start(
        (s) => this.kick(s),
        (s) => this.lanes.has(s),
      );
      return orphans.length;
    }
    const turns = await this.options.storage.turns.unfinished();
    for (const t of turns) {
      if (t.state === 'queued') continue;
      const list = this.resumable.get(t.sessionId) ?? [];
      list.push(t);
      this.resumable.set(t.sessionId, list);
    }
    const sessions = new Set(turns.map((t) => t.sessionId));
    for (const s of sessions) this.kick(s);
    return turns.length;
  }

  /** Stops the running turn, if it is running here. */
  abort(turnId: string): boolean {
    for (const r of this.running.values()) {
      if (r.turnId === turnId) {
        r.controller.abort(new Error('stopped by the user'));
        return true;
      }
    }
    return false;
  }

  /** Whether a turn of this session is running. */
  isRunning(sessionId: string): boolean {
    return this.running.has(sessionId);
  }

  /** Stops the running turn of a session, if any. */
  abortSession(sessionId: string): boolean {
    const r = this.running.get(sessionId);
    if (!r) return false;
    r.controller.abort(new Error('stopped by the user'));
    return true;
  }

  /**
   * What `/context` shows for a session: its next request measured with this engine's calibrated
   * estimator of the primary model, over the session's stored entries and its agent's system
   * prompt and tools (before the turn policy's per-person pre-filter; deferred tools as their listing).
   */
  async contextReport(session: Session): Promise<ContextReport> {
    const agent = this.options.agent(session.agentId);
    const spec = this.options.modelSpec(this.options.modelName);
    const entries = await this.transcripts.get(session.id);
    // What the next request sends of the tools: deferred ones as the listing block (docs/tools.md).
    const offered = new TurnToolOffer(agent.tools, loadedToolNames(entries), this.options.deferral ?? DEFAULT_DEFERRAL).offer();
    return contextReport({ entries, system: [...agent.system, ...offered.system], tools: offered.tools, spec, estimator: this.estimators.of(spec.name) });
  }

  /** How many turns are running now. */
  get active(): number {
    return this.running.size;
  }

  /**
   * Stops taking turns, aborts running ones as suspended, and waits for lanes to settle.
   * Replicas: then releases every session lease, so another replica resumes the suspended turns now.
   */
  async shutdown(): Promise<void> {
    this.stopping = true;
    for (const r of this.running.values()) r.controller.abort(SHUTDOWN);
    await Promise.allSettled([...this.lanes.values()].map((l) => l.done));
    await this.replica?.stop();
  }

  /** The sessions whose lease this replica holds now (replicas; empty for a single gateway). */
  heldSessions(): string[] {
    return this.replica?.heldSessions() ?? [];
  }

  /** Waits until the lanes are idle or `ms` passes (graceful drain). */
  async drain(ms: number): Promise<boolean> {
    const all = Promise.allSettled([...this.lanes.values()].map((l) => l.done)).then(() => true);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((r) => {
      timer = setTimeout(() => r(false), ms);
    });
    const done = await Promise.race([all, timeout]);
    clearTimeout(timer);
    return done;
  }

  private kick(sessionId: string): void {
    if (this.stopping) return;
    const existing = this.lanes.get(sessionId);
    if (existing) {
      existing.again = true;
      return;
    }
    const lane: Lane = { again: false, done: Promise.resolve() };
    this.lanes.set(sessionId, lane);
    lane.done = (async () => {
      // A turn whose end could not be recorded is still `queued`: it is not run again by this lane.
      let last: string | null = null;
      try {
        for (;;) {
          if (this.replica && !(await this.takeLane(sessionId))) return;
          lane.again = false;
          for (;;) {
            if (this.stopping || this.lost.has(sessionId)) return;
            const next = this.resumable.get(sessionId)?.shift() ?? (await this.options.storage.turns.nextQueued(sessionId));
            if (!next) break;
            if (next.id === last) {
              this.options.log.error({ sessionId, turnId: next.id }, 'turn still queued after it ran; the lane stops until the next message');
              return;
            }
            last = next.id;
            await this.compactions.get(sessionId);
            await this.runTurn(next);
          }
          if (this.replica) {
            // Released before the last look: a message accepted by another replica while this one
            // held the lease found it taken, and is seen here (or that replica's lane takes it).
            await this.replica.release(sessionId);
            if (this.stopping || (!lane.again && !(await this.options.storage.turns.nextQueued(sessionId)))) break;
            continue;
          }
          if (!lane.again) break;
        }
      } catch (err) {
        if (isSwbError(err, SwbErrorCode.StorageUnavailable)) {
          this.options.log.warn({ err, sessionId }, 'session lane stopped by a storage outage; its turns resume when the database is back');
          this.options.onStorageOutage?.();
        } else this.options.log.error({ err, sessionId }, 'session lane failed');
      } finally {
        this.lanes.delete(sessionId);
        this.resumable.delete(sessionId);
        this.lost.delete(sessionId);
        await this.replica?.release(sessionId);
      }
    })();
  }

  /**
   * Replicas: takes the session's lease for this lane (false while another replica holds it) and
   * reads what this replica must resume: every unfinished turn of the session that is not queued
   * was left by a replica that died, left or lost the lease (this one included).
   */
  private async takeLane(sessionId: string): Promise<boolean> {
    const replica = this.replica!;
    // A manual compaction holds the lease: it kicks the lane when it is done.
    if (this.compactions.has(sessionId)) return false;
    const lease = await replica.hold(sessionId, () => {
      this.lost.add(sessionId);
      this.running.get(sessionId)?.controller.abort(LEASE_LOST);
    });
    if (!lease) return false;
    const left = (await this.options.storage.turns.unfinished()).filter((t) => t.sessionId === sessionId && t.state !== 'queued');
    if (left.length > 0) {
      // Their subagents ran on the replica that left them: they never run again (as at a single gateway's start).
      await this.options.storage.sidechains.interruptRunning(left.map((t) => t.id));
      this.resumable.set(sessionId, left);
    } else this.resumable.delete(sessionId);
    return true;
  }

  /** One turn: load it, prepare its transcript, build its policy, run the loop, finish. */
  private async runTurn(turn: Turn): Promise<void> {
    const active = await this.loadTurn(turn);
    if (!active) return;
    try {
      const start = await this.prepareTranscript(active);
      if (start.answered) return await this.finish(active, { state: 'completed', reason: 'completed' });
      const policy = await this.buildPolicy(active);
      const refusal = await this.beforeTurn(active, policy);
      if (refusal !== undefined) {
        await this.finish(active, { state: 'failed', reason: 'hook_stopped', error: refusal, usage: active.usage });
        await policy.afterTurn?.('hook_stopped');
        return;
      }
      const result = await this.runLoop(active, policy, start);
      await this.endLoop(active, policy, result);
    } catch (err) {
      // A fenced write refused: the replica that took the session's lease resumes the turn; nothing more is written here.
      if (isLeaseLost(err) || this.lost.has(turn.sessionId)) {
        this.lost.add(turn.sessionId);
        active.log.warn({ err }, 'session lease lost: the turn is left to the replica that took it');
        return;
      }
      if (isSwbError(err, SwbErrorCode.StorageUnavailable)) {
        // Not the turn's failure: it stays unfinished in the store and runs again from what was
        // stored once the database answers (resumeInterrupted); its sender sees no final until then.
        active.log.warn({ err }, 'turn cut off by a storage outage; it resumes when the database is back');
        this.transcripts.drop(turn.sessionId);
        throw err;
      }
      active.log.error({ err }, 'turn failed');
      await this.finish(active, { state: 'failed', reason: 'internal', error: INTERNAL_ERROR }).catch(async (e: unknown) => {
        if (isLeaseLost(e)) return void active.log.warn({ err: e }, 'session lease lost while recording a failed turn');
        // What the turn had not stored yet may be what failed: record the end on its own.
        active.log.error({ err: e }, 'could not record the failed turn with its entries');
        await this.options.storage.turns
          .setState(turn.id, 'failed', { reason: 'internal', error: INTERNAL_ERROR })
          .catch((again: unknown) => active.log.error({ err: again }, 'could not record the failed turn'));
      });
    } finally {
      this.running.delete(turn.sessionId);
      active.run.settleEnded();
      active.queue.close();
      await active.rendering;
    }
  }

  /** Step 1: the turn's session and message; starts the channel's render and marks the turn running here. */
  private async loadTurn(turn: Turn): Promise<ActiveTurn | null> {
    const startedAt = performance.now();
    const { storage } = this.options;
    const log = this.options.log.child({ sessionId: turn.sessionId, turnId: turn.id });
    const session = await storage.sessions.get(turn.sessionId);
    const inbox = await storage.turns.inbox(turn.inboxId);
    if (!session || !inbox) {
      log.error('turn without session or inbox item; marking failed');
      await storage.turns.setState(turn.id, 'failed', { reason: 'internal', error: 'missing session or inbox item' });
      return null;
    }
    const message = inbox.message;
    const channel = this.options.channel(`${message.channel}:${message.account}`);
    const resumed = turn.state !== 'queued';
    const queue = new AsyncQueue<TurnEvent>();
    const rendering = channel
      ? channel.render(message.conversation, turn.id, queue, { clientId: turn.clientId, resumed }).catch((err: unknown) => {
          log.error({ err }, 'render failed');
        })
      : Promise.resolve(log.warn({ channel: message.channel }, 'channel not running; reply kept in the transcript'));
    let settle = () => {};
    const ended = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const run: Running = {
      turnId: turn.id,
      principalId: message.principalId ?? null,
      controller: new AbortController(),
      pending: [],
      drained: [],
      ending: false,
      ended,
      settleEnded: () => settle(),
    };
    this.running.set(turn.sessionId, run);
    const journal = new TurnJournal(storage, this.transcripts, session.id, turn.id, turn.state === 'running');
    const agent = this.options.agent(session.agentId);
    return { turn, session, message, agent, resumed, log, queue, rendering, run, journal, usage: emptyUsage(), startedAt };
  }

  /** Step 2: the user entry (once), and where the transcript leaves the turn (a resume's repairs). */
  private async prepareTranscript(active: ActiveTurn): Promise<TurnStart> {
    const { turn, message, journal, resumed } = active;
    const stored = await this.transcripts.get(active.session.id);
    if (!stored.some((e) => e.turnId === turn.id && e.kind === 'user')) {
      const zone = (await this.options.instructions?.timezone(active)) ?? active.agent.timezone ?? 'UTC';
      const stamp = turnStamp(this.options.now?.() ?? new Date(), zone);
      const content = await userContent(message, this.options.imageBlocks ?? false);
      journal.add([{ kind: 'user', turnId: turn.id, payload: { content, stamp } }]);
    }
    active.log.info({ resumed }, 'turn started');
    if (resumed) active.queue.push({ type: 'attempt_reset', reason: 'resumed after restart' });
    const start = turnStart(await journal.transcript(), turn.id, resumed);
    journal.add(start.interrupted);
    return start;
  }

  /** Step 3: what this turn may do (tools, permission decisions, hooks). */
  private buildPolicy(active: ActiveTurn): Promise<TurnPolicy> {
    const { session, turn, message, agent } = active;
    return this.options.policy({
      session,
      turn,
      message,
      agent,
      emit: (ev) => active.queue.push(ev),
      recordCall: (usage, model) => this.recordCall(active, { type: 'usage', usage, model }),
    });
  }

  /**
   * The UserPromptSubmit hooks of a new turn; a string refuses it. The turn is begun durably
   * first: the hooks read the stored transcript, and a restart after them must not run them again.
   */
  private async beforeTurn(active: ActiveTurn, policy: TurnPolicy): Promise<string | undefined> {
    if (active.resumed || !policy.beforeTurn) return undefined;
    await active.journal.flush();
    return (await policy.beforeTurn()) || undefined;
  }

  /** Step 4: the agent loop; every event is rendered, stored (now or with the end) and counted. */
  private async runLoop(active: ActiveTurn, policy: TurnPolicy, start: TurnStart): Promise<QueryResult> {
    const { options } = this;
    const { session, turn, agent, run, journal, log } = active;
    const spec = options.modelSpec(options.modelName);
    const counting = turnCounting(options.countTokens, options.model, options.modelName, options.maxTokens, (fields, msg) => log.debug(fields, msg));
    const { message } = active;
    const emit = (ev: AgentEvent) => active.queue.push(ev);
    const workspace = policy.workspace ?? agent.workspace;
    const instructions = await options.instructions?.forTurn({
      session,
      turn,
      message,
      agent,
      emit,
      workspace,
      messages: start.messages,
      signal: run.controller.signal,
    });
    // A resumed turn loads its skills again: a restart must not lift a skill's narrowing mid-turn.
    if (active.resumed && policy.skills) for (const name of skillsLoadedInTurn(await journal.transcript(), turn.id)) await policy.skills.load(name);
    // The skills listing goes after the layered prompt: it varies with the speaker's switches, not per call.
    const system = [...(instructions?.system ?? agent.system), ...(policy.skills?.listing() ?? [])];
    const afterTool = composeAfterTool(policy.afterTool, instructions?.afterTool);
    let notes: string[] = [];
    // Deferred tool schemas: the loaded set comes from the session's transcript (tool_search results).
    const offer = new TurnToolOffer(policy.tools, loadedToolNames(await journal.transcript()), options.deferral ?? DEFAULT_DEFERRAL);
    const meter = contextMeter(spec, this.estimators.of(spec.name), [...system, ...offer.offer().system], offer.offer().tools, counting);
    const beforeCall = await options.budgets?.forTurn({
      turnId: turn.id,
      sessionId: session.id,
      agentId: agent.id,
      principalId: run.principalId,
      pendingCalls: () => journal.pendingCalls,
      notify: (text) => this.notify(active, text),
      log,
    });
    const toolContext = {
      sessionId: session.id,
      turnId: turn.id,
      agentId: agent.id,
      workspace,
      ...(policy.pathFilter ? { pathFilter: policy.pathFilter } : {}),
      ...(policy.principalId !== undefined ? { principalId: policy.principalId } : {}),
      ...(policy.roomSession !== undefined ? { roomSession: policy.roomSession } : {}),
      ...sendFileFor(options.channel(`${active.message.channel}:${active.message.account}`), active.message, turn.id),
    };
    // Subagents of this turn: the pre-filtered tools, the turn's permission seam, its budgets and usage records.
    const subagent = options.subagents?.launcher({
      sessionId: session.id,
      turnId: turn.id,
      agentId: agent.id,
      tools: policy.tools,
      canUseTool: policy.canUseTool,
      ...(policy.forSubagent ? { forSubagent: policy.forSubagent } : {}),
      ...(policy.afterTool ? { afterTool: policy.afterTool } : {}),
      ...(policy.skills ? { skills: policy.skills } : {}),
      toolContext,
      ...(beforeCall ? { beforeCall } : {}),
      onUsage: (ev) => this.recordCall(active, ev),
      log,
    });
    const loop = query({
      model: options.model,
      modelName: options.modelName,
      ...(options.fallbackModel ? { fallbackModel: options.fallbackModel } : {}),
      maxTokens: options.maxTokens,
      // A tool call cut at maxTokens is retried once with the model's own output maximum.
      maxOutputTokens: spec.maxOutputTokens,
      system,
      messages: start.messages,
      tools: offer.tools,
      ...(offer.active ? { offer: offer.offer } : {}),
      canUseTool: policy.canUseTool,
      ...(afterTool ? { afterTool } : {}),
      ...(policy.shouldStop ? { shouldStop: policy.shouldStop } : {}),
      signal: run.controller.signal,
      maxTurns: agent.maxTurns,
      toolContext: { ...toolContext, ...(policy.skills ? { skills: policy.skills } : {}), ...(subagent ? { subagent } : {}) },
      toolTimeoutMs: options.toolTimeoutMs,
      ...(options.toolTimeouts ? { toolTimeouts: options.toolTimeouts } : {}),
      // Progress of a running tool goes to the renderer only (never stored).
      onToolProgress: (toolUseId, name, update) => active.queue.push({ type: 'tool_progress', toolUseId, name, ...update }),
      drainInjected: () => {
        // Nested AGENTS.md notes first (stored as this turn's entry), then steered messages.
        notes = instructions?.drainNotes() ?? [];
        run.drained = run.pending.splice(0);
        return [...notes, ...run.drained.map((p) => p.text)];
      },
      retry: options.retry,
      maxContinuations: options.maxContinuations,
      presetResults: start.preset,
      ...(options.resultBudgets ? { resultBudgets: options.resultBudgets } : {}),
      shapers: [
        meterShaper(meter),
        await microcompactForTurn(journal, meter, options.microcompact ?? DEFAULT_MICROCOMPACT),
        this.compaction.shaper({
          journal,
          meter,
          fields: { sessionId: session.id, turnId: turn.id, agentId: agent.id },
          log,
          recordCall: (usage, model) => this.recordCall(active, { type: 'usage', usage, model }),
          notify: (text) => this.notify(active, text),
          remindToSave: policy.tools.some((tool) => tool.name === 'memory_save'),
        }),
      ],
      ...(beforeCall ? { beforeCall } : {}),
    });
    const durability = new DurabilityRule();
    let step = await loop.next();
    while (!step.done) {
      const ev = step.value;
      if (ev.type === 'user_message' && (run.drained.length > 0 || notes.length > 0)) {
        if (notes.length > 0) journal.add([{ kind: 'user', turnId: turn.id, payload: { content: notes.map((text) => ({ type: 'text' as const, text })) } }]);
        notes = [];
        if (run.drained.length > 0) await this.absorb(active, run.drained);
        run.drained = [];
      } else {
        const entry = entryOf(ev, turn.id);
        if (entry) journal.add([entry]);
        if (durability.needsFlush(ev)) await journal.flush();
        logLoopEvent(ev, log);
      }
      countUsage(active.usage, ev);
      if (ev.type === 'usage') this.recordUsage(active, ev);
      if (ev.type !== 'terminal') active.queue.push(ev);
      step = await loop.next();
    }
    return step.value;
  }

  /**
   * One model call's usage row, as the call completes. It rides the turn's journal: stored with
   * the turn's next write (the flush before a tool call is checked or run, or the end), so a
   * completed call is durable before the turn acts on it and costs no write of its own.
   */
  private recordUsage(active: ActiveTurn, ev: Extract<AgentEvent, { type: 'usage' }>): void {
    const { message } = active;
    active.journal.addCall(
      usageRecordOf(ev, this.options.modelSpec(ev.model).price, {
        turnId: active.turn.id,
        sessionId: active.session.id,
        principalId: active.run.principalId,
        agentId: active.agent.id,
        channel: `${message.channel}:${message.account}`,
      }),
    );
  }

  /** A model call the loop did not make (a summary call): counted in the turn's usage and recorded as its own row. */
  private recordCall(active: ActiveTurn, ev: Extract<AgentEvent, { type: 'usage' }>): void {
    countUsage(active.usage, ev);
    this.recordUsage(active, ev);
  }

  /** Tells the person of a turn something in one line (channel.notify never rejects; a missing channel is logged). */
  private async notify(active: ActiveTurn, text: string): Promise<void> {
    const { message } = active;
    const channel = this.options.channel(`${message.channel}:${message.account}`);
    if (!channel) return void active.log.warn('channel not running; notice not sent');
    await channel.notify(message.conversation, text).catch((err: unknown) => active.log.warn({ err }, 'notice failed'));
  }

  /** Step 5: how the loop ended becomes the turn's end — or its suspension for shutdown. */
  private async endLoop(active: ActiveTurn, policy: TurnPolicy, result: QueryResult): Promise<void> {
    const reason: TurnEndReason = result.reason;
    if (reason === 'aborted' && active.run.controller.signal.reason === LEASE_LOST) {
      active.log.warn('session lease lost: the turn stops here and resumes on the replica that took it');
      return;
    }
    if (reason === 'aborted' && suspendedForShutdown(active.run.controller.signal)) {
      await active.journal.finish({ state: 'suspended', reason: 'shutdown', usage: active.usage });
      active.log.info('turn suspended for shutdown');
      return;
    }
    if (reason === 'aborted') active.journal.add(danglingResults(await active.journal.transcript(), active.turn.id));
    await this.finish(active, { state: endStateOf(result.reason), reason, ...(result.error ? { error: result.error } : {}), usage: active.usage });
    await policy.afterTurn?.(reason);
  }

  /**
   * Ends a turn: cancels its approvals, renders its end and waits for the render. What the turn has
   * not stored yet goes with the end in one transaction — together with the last final part's
   * ledger row when the channel records that part (see {@link TurnFinishes}), else on its own after
   * the render. A crash in between re-runs or re-delivers, and the ledger stops a second send.
   */
  private async finish(active: ActiveTurn, end: TurnEnd): Promise<void> {
    const { turn, session, queue, journal } = active;
    active.run.ending = true;
    this.reportEnd(active, end);
    // An approval of an ended turn can never be used: it is cancelled before anyone hears the end.
    if (this.options.cancelApprovals) {
      await this.options
        .cancelApprovals(turn.id, cancelledBecause(end.state, end.reason))
        .catch((err: unknown) => this.options.log.error({ err, turnId: turn.id }, 'could not cancel the approvals of an ended turn'));
    }
    const text = turnText(await journal.ofTurn(), turn.id);
    const record = { state: end.state, reason: end.reason, ...(end.error ? { error: end.error } : {}), ...(end.usage ? { usage: end.usage } : {}) };
    let finished = false;
    this.finishes.expect(turn.id, async (delivery) => {
      const written = await journal.finish({ ...record, delivery });
      finished = true;
      return written.delivery!;
    });
    queue.push({ type: 'turn_end', state: end.state, reason: end.reason, text, ...(end.error ? { error: end.error } : {}) });
    queue.close();
    try {
      await active.rendering;
    } finally {
      this.finishes.close(turn.id);
    }
    if (!finished) await journal.finish(record);
    this.options.log.info({ sessionId: session.id, turnId: turn.id, state: end.state, reason: end.reason }, 'turn finished');
  }

  /** Tells {@link EngineOptions.onTurnEnd} of a turn's end; its throw is logged, never the turn's failure. */
  private reportEnd(active: ActiveTurn, end: TurnEnd): void {
    if (!this.options.onTurnEnd) return;
    const { message } = active;
    try {
      this.options.onTurnEnd({
        channel: message.channel,
        account: message.account,
        agentId: active.agent.id,
        state: end.state,
        reason: end.reason,
        durationMs: performance.now() - active.startedAt,
      });
    } catch (err) {
      active.log.error({ err }, 'the turn-end observer failed');
    }
  }

  /**
   * Persists messages a steered turn took in (each under its own turn id, which is completed as
   * `steered` in the same transaction) and tells their senders where the answer comes from. What
   * the running turn has not stored yet goes first, so the transcript keeps its order.
   */
  private async absorb(active: ActiveTurn, taken: Pending[]): Promise<void> {
    const { storage } = this.options;
    const sessionId = active.session.id;
    await active.journal.flush();
    const entries: NewEntry[] = taken.map((p) => ({ kind: 'user', turnId: p.turnId, payload: { content: [{ type: 'text', text: p.text }] } }));
    const stored = await storage.turns.absorb(
      sessionId,
      taken.map((p) => p.turnId),
      entries,
      this.transcripts.fence(sessionId),
    );
    this.transcripts.mirror(sessionId, stored);
    for (const p of taken) {
      const turn = await storage.turns.get(p.turnId);
      const item = turn ? await storage.turns.inbox(turn.inboxId) : null;
      const channel = this.options.channel(p.channelId);
      if (!turn || !item || !channel) continue;
      const steered = new AsyncQueue<TurnEvent>();
      steered.push({ type: 'turn_end', state: 'completed', reason: 'steered', text: '' });
      steered.close();
      await channel.render(item.message.conversation, p.turnId, steered, { clientId: turn.clientId, resumed: false }).catch((err: unknown) => {
        active.log.error({ err }, 'render of a steered message failed');
      });
    }
    active.log.info({ steered: taken.length }, 'messages steered into the running turn');
  }
}

/** Both PostToolUse callbacks, in order (the policy's hooks, then the instruction layer's bookkeeping); the hooks' text is kept. */
function composeAfterTool(first: QueryParams['afterTool'], second: QueryParams['afterTool']): QueryParams['afterTool'] {
  if (!first || !second) return first ?? second;
  return async (call) => {
    const text = await first(call);
    await second(call);
    return text;
  };
}

/**
 * Whether a message may join (steer) a running turn: only one from the same principal. A turn
 * acts with the authority of the person whose message it answers, so a message from anyone
 * else — or from a sender without a principal — queues as its own follow-up turn; so does a
 * message with images (steering injects text only).
 */
function canSteer(run: Running, message: InboundMessage): boolean {
  // A message with images runs as its own turn: steering injects text only, and its image blocks would be lost.
  if (Array.isArray(message.images) && message.images.length > 0) return false;
  return run.principalId !== null && message.principalId !== undefined && message.principalId === run.principalId;
}
