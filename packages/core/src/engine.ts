import {
  query,
  toolUses,
  type AgentEvent,
  type AnyTool,
  type CanUseTool,
  type ModelClient,
  type PathFilter,
  type QueryParams,
  type RetryPolicy,
  type SystemBlock,
  type ToolResultBlock,
} from '@switchboard/agent';
import type { Logger } from 'pino';
import { AsyncQueue } from './async-queue.js';
import type { AcceptResult, Channel, ConversationRef, InboundMessage, TurnEvent } from './channel.js';
import type { SessionKey } from './session-key.js';
import type { Entry, NewEntry, Session, Storage, Turn, TurnUsage } from './storage.js';
import { rebuildMessages, turnText, type ToolStartPayload } from './transcript.js';
import { ownValue } from './own.js';
import { TranscriptCache } from './transcript-cache.js';

/** What one agent runs with. */
export interface AgentRuntime {
  id: string;
  system: SystemBlock[];
  tools: AnyTool[];
  maxTurns: number;
  workspace: string;
}

export interface EngineOptions {
  storage: Storage;
  log: Logger;
  model: ModelClient;
  modelName: string;
  fallbackModel?: string;
  maxTokens: number;
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
}

export interface TurnPolicyContext {
  session: Session;
  turn: Turn;
  message: InboundMessage;
  agent: AgentRuntime;
  /** Sends an event to the turn's renderer (approval requests). */
  emit(ev: AgentEvent): void;
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
  /** After the turn ends (Stop hooks). Must not throw. */
  afterTurn?(reason: string): Promise<void>;
  /** The directory this turn's file tools work in (default: the agent's `workspace`). */
  workspace?: string;
  /** Which entries a walking tool may return (see `ToolContext.pathFilter`). */
  pathFilter?: PathFilter;
}

/** Who sent a message and where it goes: resolved from the inbound message, never from the model. */
export interface Route {
  agentId: string;
  key: SessionKey;
  clientId: string | null;
}

const SHUTDOWN = Symbol('shutdown');

/**
 * Whether a turn's signal was aborted to suspend it for shutdown (it resumes at the next start):
 * what it waits for (an approval) is still pending, not ended.
 */
export function suspendedForShutdown(signal: AbortSignal): boolean {
  return signal.aborted && signal.reason === SHUTDOWN;
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
}

function emptyUsage(): TurnUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, models: {}, retries: 0, fallbackUsed: false };
}

/**
 * Runs turns: one at a time per session (a lane), sessions in parallel. Every loop event is
 * persisted before the loop continues, so a restart resumes from the transcript.
 */
export class TurnEngine {
  private readonly lanes = new Map<string, Lane>();
  /** Running turns by session id. */
  private readonly running = new Map<string, Running>();
  private readonly resumable = new Map<string, Turn[]>();
  private stopping = false;
  private readonly transcripts: TranscriptCache;

  constructor(private readonly o: EngineOptions) {
    this.transcripts = new TranscriptCache(o.storage, o.transcriptCacheSize ?? 256, o.transcriptCacheEntries ?? 50_000);
  }

  /** Durably accepts an inbound message and schedules its turn. */
  async accept(message: InboundMessage, route: Route): Promise<AcceptResult> {
    const res = await this.o.storage.turns.accept(message, { key: route.key, clientId: route.clientId });
    if (res.duplicate || !res.sessionId || !res.turnId) return res;
    const run = this.running.get(res.sessionId);
    if (run && canSteer(run, message)) {
      const session = await this.o.storage.sessions.get(res.sessionId);
      const channelId = `${message.channel}:${message.account}`;
      // Steer: the running turn takes the message at its next model call. If it makes no further
      // call, the queued turn simply runs next (followup).
      if (session && this.o.queueMode(session, channelId) === 'steer') run.pending.push({ turnId: res.turnId, text: message.text, channelId });
    }
    this.kick(res.sessionId);
    return res;
  }

  /** Resumes every unfinished turn found at start-up, in order, per session. */
  async resumeAll(): Promise<number> {
    const turns = await this.o.storage.turns.unfinished();
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

  /** How many turns are running now. */
  get active(): number {
    return this.running.size;
  }

  /** Stops taking turns, aborts running ones as suspended, and waits for lanes to settle. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    for (const r of this.running.values()) r.controller.abort(SHUTDOWN);
    await Promise.allSettled([...this.lanes.values()].map((l) => l.done));
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
      try {
        for (;;) {
          lane.again = false;
          for (;;) {
            if (this.stopping) return;
            const next = this.resumable.get(sessionId)?.shift() ?? (await this.o.storage.turns.nextQueued(sessionId));
            if (!next) break;
            await this.runTurn(next);
          }
          if (!lane.again) break;
        }
      } catch (err) {
        this.o.log.error({ err, sessionId }, 'session lane failed');
      } finally {
        this.lanes.delete(sessionId);
        this.resumable.delete(sessionId);
      }
    })();
  }

  private async runTurn(turn: Turn): Promise<void> {
    const { storage } = this.o;
    const log = this.o.log.child({ sessionId: turn.sessionId, turnId: turn.id });
    const session = await storage.sessions.get(turn.sessionId);
    const inbox = await storage.turns.inbox(turn.inboxId);
    if (!session || !inbox) {
      log.error('turn without session or inbox item; marking failed');
      await storage.turns.setState(turn.id, 'failed', { reason: 'internal', error: 'missing session or inbox item' });
      return;
    }
    const msg = inbox.message;
    const to: ConversationRef = msg.conversation;
    const channel = this.o.channel(`${msg.channel}:${msg.account}`);
    const resumed = turn.state !== 'queued';
    const queue = new AsyncQueue<TurnEvent>();
    const rendering = channel
      ? channel.render(to, turn.id, queue, { clientId: turn.clientId, resumed }).catch((err: unknown) => {
          log.error({ err }, 'render failed');
        })
      : Promise.resolve(log.warn({ channel: msg.channel }, 'channel not running; reply kept in the transcript'));
    const controller = new AbortController();
    const run: Running = { turnId: turn.id, principalId: msg.principalId ?? null, controller, pending: [], drained: [] };
    this.running.set(turn.sessionId, run);
    const usage = emptyUsage();
    try {
      const entries: Entry[] = await this.transcripts.get(session.id);
      const hasUser = entries.some((e) => e.turnId === turn.id && e.kind === 'user');
      const userEntry: NewEntry | null = hasUser ? null : { kind: 'user', turnId: turn.id, payload: { content: [{ type: 'text', text: msg.text }] } };
      await storage.turns.begin(turn.id, userEntry);
      if (userEntry) this.transcripts.mirror(session.id, [userEntry]);
      log.info({ resumed }, 'turn started');
      if (resumed) queue.push({ type: 'attempt_reset', reason: 'resumed after restart' });

      const rebuilt = rebuildMessages(entries);
      const lastOfTurn = entries.filter((e) => e.turnId === turn.id).at(-1);
      // A resumed turn whose last stored step is a complete answer only needs delivering.
      if (resumed && lastOfTurn?.kind === 'assistant' && !rebuilt.open) {
        await this.finish(turn, session, queue, rendering, 'completed', 'completed');
        return;
      }
      const preset = new Map<string, ToolResultBlock>();
      if (rebuilt.open) {
        const interrupted: NewEntry[] = [];
        for (const use of toolUses(rebuilt.open.message)) {
          const known = rebuilt.open.results.get(use.id);
          if (known) {
            preset.set(use.id, known);
            continue;
          }
          const start: ToolStartPayload | undefined = rebuilt.open.started.get(use.id);
          if (start && !start.readOnly) {
            const result: ToolResultBlock = {
              type: 'tool_result',
              tool_use_id: use.id,
              content: `The gateway restarted while ${use.name} was running, so it is unknown whether it completed. Check its effects before retrying.`,
              is_error: true,
            };
            preset.set(use.id, result);
            interrupted.push({ kind: 'tool_result', turnId: turn.id, payload: { result } });
          }
        }
        if (interrupted.length > 0) await this.transcripts.append(session.id, interrupted);
      }
      const agent = this.o.agent(session.agentId);
      const policy = await this.o.policy({ session, turn, message: msg, agent, emit: (ev) => queue.push(ev) });
      if (!resumed && policy.beforeTurn) {
        const refusal = await policy.beforeTurn();
        if (refusal) {
          await this.finish(turn, session, queue, rendering, 'failed', 'hook_stopped', refusal, usage);
          await policy.afterTurn?.('hook_stopped');
          return;
        }
      }
      const loop = query({
        model: this.o.model,
        modelName: this.o.modelName,
        ...(this.o.fallbackModel ? { fallbackModel: this.o.fallbackModel } : {}),
        maxTokens: this.o.maxTokens,
        system: agent.system,
        messages: rebuilt.messages,
        tools: policy.tools,
        canUseTool: policy.canUseTool,
        ...(policy.afterTool ? { afterTool: policy.afterTool } : {}),
        ...(policy.shouldStop ? { shouldStop: policy.shouldStop } : {}),
        signal: controller.signal,
        maxTurns: agent.maxTurns,
        toolContext: {
          sessionId: session.id,
          turnId: turn.id,
          agentId: agent.id,
          workspace: policy.workspace ?? agent.workspace,
          ...(policy.pathFilter ? { pathFilter: policy.pathFilter } : {}),
        },
        toolTimeoutMs: this.o.toolTimeoutMs,
        ...(this.o.toolTimeouts ? { toolTimeouts: this.o.toolTimeouts } : {}),
        drainInjected: () => {
          run.drained = run.pending.splice(0);
          return run.drained.map((p) => p.text);
        },
        retry: this.o.retry,
        maxContinuations: this.o.maxContinuations,
        presetResults: preset,
      });
      let result = await loop.next();
      while (!result.done) {
        const ev = result.value;
        if (ev.type === 'user_message' && run.drained.length > 0) {
          await this.absorb(session.id, run.drained, log);
          run.drained = [];
        } else {
          await this.persist(session.id, turn.id, ev, log);
        }
        countUsage(usage, ev);
        if (ev.type !== 'terminal') queue.push(ev);
        result = await loop.next();
      }
      const { reason, error } = result.value;
      if (reason === 'aborted' && controller.signal.reason === SHUTDOWN) {
        await storage.turns.setState(turn.id, 'suspended', { reason: 'shutdown', usage });
        log.info('turn suspended for shutdown');
        queue.close();
        await rendering;
        return;
      }
      if (reason === 'aborted') await this.closeDangling(session.id, turn.id);
      const state = reason === 'completed' || reason === 'max_turns' ? 'completed' : reason === 'aborted' ? 'interrupted' : 'failed';
      await this.finish(turn, session, queue, rendering, state, reason, error, usage);
      await policy.afterTurn?.(reason);
    } catch (err) {
      log.error({ err }, 'turn failed');
      await this.finish(turn, session, queue, rendering, 'failed', 'internal', 'The gateway hit an internal error while answering. Please try again.').catch(
        (e: unknown) => log.error({ err: e }, 'could not record the failed turn'),
      );
    } finally {
      this.running.delete(turn.sessionId);
      queue.close();
      await rendering;
    }
  }

  private async finish(
    turn: Turn,
    session: Session,
    queue: AsyncQueue<TurnEvent>,
    rendering: Promise<void>,
    state: 'completed' | 'failed' | 'interrupted',
    reason: string,
    error?: string,
    usage?: TurnUsage,
  ): Promise<void> {
    // An approval of an ended turn can never be used: it is cancelled before anyone hears the end.
    if (this.o.cancelApprovals) {
      const why = state === 'interrupted' ? 'the turn was stopped' : state === 'failed' ? `the turn failed (${reason})` : 'the turn ended';
      await this.o
        .cancelApprovals(turn.id, why)
        .catch((err: unknown) => this.o.log.error({ err, turnId: turn.id }, 'could not cancel the approvals of an ended turn'));
    }
    const text = turnText(await this.transcripts.turn(session.id, turn.id), turn.id);
    queue.push({ type: 'turn_end', state, reason, text, ...(error ? { error } : {}) });
    queue.close();
    // The final part is ledgered before the turn is marked done: a crash in between re-delivers
    // from the transcript, and the ledger stops a second send.
    await rendering;
    await this.o.storage.turns.setState(turn.id, state, { reason, ...(error ? { error } : {}), ...(usage ? { usage } : {}) });
    this.o.log.info({ sessionId: session.id, turnId: turn.id, state, reason }, 'turn finished');
  }

  /**
   * Persists messages a steered turn took in (each under its own turn id, which is completed as
   * `steered` in the same transaction) and tells their senders where the answer comes from.
   */
  private async absorb(sessionId: string, taken: Pending[], log: Logger): Promise<void> {
    const entries: NewEntry[] = taken.map((p) => ({ kind: 'user', turnId: p.turnId, payload: { content: [{ type: 'text', text: p.text }] } }));
    await this.o.storage.turns.absorb(
      sessionId,
      taken.map((p) => p.turnId),
      entries,
    );
    this.transcripts.mirror(sessionId, entries);
    for (const p of taken) {
      const turn = await this.o.storage.turns.get(p.turnId);
      const item = turn ? await this.o.storage.turns.inbox(turn.inboxId) : null;
      const channel = this.o.channel(p.channelId);
      if (!turn || !item || !channel) continue;
      const q = new AsyncQueue<TurnEvent>();
      q.push({ type: 'turn_end', state: 'completed', reason: 'steered', text: '' });
      q.close();
      await channel.render(item.message.conversation, p.turnId, q, { clientId: turn.clientId, resumed: false }).catch((err: unknown) => {
        log.error({ err }, 'render of a steered message failed');
      });
    }
    log.info({ steered: taken.length }, 'messages steered into the running turn');
  }

  /** After a user abort, answers every unanswered tool_use so the history stays valid. */
  private async closeDangling(sessionId: string, turnId: string): Promise<void> {
    const rebuilt = rebuildMessages(await this.transcripts.get(sessionId));
    if (!rebuilt.open) return;
    const add: NewEntry[] = toolUses(rebuilt.open.message)
      .filter((u) => !rebuilt.open!.results.has(u.id))
      .map((u) => ({
        kind: 'tool_result',
        turnId,
        payload: { result: { type: 'tool_result', tool_use_id: u.id, content: 'The turn was stopped before this tool call finished.', is_error: true } },
      }));
    if (add.length > 0) await this.transcripts.append(sessionId, add);
  }

  private async persist(sessionId: string, turnId: string, ev: AgentEvent, log: Logger): Promise<void> {
    const s = this.transcripts;
    switch (ev.type) {
      case 'assistant_message':
        await s.append(sessionId, [{ kind: 'assistant', turnId, payload: { content: ev.message.content, model: ev.model } }]);
        break;
      case 'user_message':
        await s.append(sessionId, [{ kind: 'user', turnId, payload: { content: ev.message.content } }]);
        break;
      case 'tool_start':
        await s.append(sessionId, [
          { kind: 'tool_start', turnId, payload: { toolUseId: ev.toolUseId, name: ev.name, input: ev.input, readOnly: ev.readOnly } },
        ]);
        break;
      case 'tool_end':
        await s.append(sessionId, [
          { kind: 'tool_result', turnId, payload: { result: ev.result, ...(ev.fullContent !== undefined ? { fullContent: ev.fullContent } : {}) } },
        ]);
        break;
      case 'model_retry':
        if (ev.fallback) log.warn({ model: ev.model, error: ev.error }, 'retry budget spent: switching to the fallback model');
        else log.warn({ attempt: ev.attempt, delayMs: ev.delayMs, model: ev.model, error: ev.error }, 'model call retried');
        break;
      case 'usage':
        log.debug({ usage: ev.usage, model: ev.model }, 'model usage');
        break;
      default:
        break;
    }
  }
}

/**
 * Whether a message may join (steer) a running turn: only one from the same principal. A turn
 * acts with the authority of the person whose message it answers, so a message from anyone
 * else — or from a sender without a principal — queues as its own follow-up turn.
 */
function canSteer(run: Running, message: InboundMessage): boolean {
  return run.principalId !== null && message.principalId !== undefined && message.principalId === run.principalId;
}

/** Adds one loop event's usage facts to the turn's usage record. */
export function countUsage(u: TurnUsage, ev: AgentEvent): void {
  if (ev.type === 'usage') {
    u.inputTokens += ev.usage.inputTokens;
    u.outputTokens += ev.usage.outputTokens;
    u.cacheReadInputTokens += ev.usage.cacheReadInputTokens;
    u.cacheCreationInputTokens += ev.usage.cacheCreationInputTokens;
    let m = ownValue(u.models, ev.model);
    if (!m) {
      m = { calls: 0, inputTokens: 0, outputTokens: 0 };
      // defineProperty: a model named "__proto__" becomes an entry, not the record's prototype.
      Object.defineProperty(u.models, ev.model, { value: m, enumerable: true, writable: true, configurable: true });
    }
    m.calls++;
    m.inputTokens += ev.usage.inputTokens;
    m.outputTokens += ev.usage.outputTokens;
  } else if (ev.type === 'model_retry') {
    if (ev.fallback) u.fallbackUsed = true;
    else u.retries++;
  }
}
