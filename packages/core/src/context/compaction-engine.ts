import { randomUUID } from 'node:crypto';
import { type AnyTool, type ModelClient, type ModelSpecLookup, type RequestShaper, type SystemBlock, toolSpec, type Usage } from '@switchboard/agent';
import type { Logger } from 'pino';
import type { HookTurnFields } from '../permissions/hooks.js';
import type { Session, Storage } from '../storage.js';
import type { TranscriptCache } from '../transcript-cache.js';
import { rebuildMessages } from '../transcript.js';
import type { TurnJournal } from '../turn-journal.js';
import { usageRecordOf } from '../usage.js';
import { CompactionBreaker } from './compaction-breaker.js';
import { type CompactionContext, type CompactionHooks, type CompactionSettings, compactHistory } from './compaction-run.js';
import { compactionShaper } from './compaction-shaper.js';
import { type ContextMeter, contextMeter, type TokenEstimators } from './meter.js';

/** What the engine's compaction is built from. */
export interface EngineCompactionOptions {
  settings: CompactionSettings;
  model: ModelClient;
  /** The primary model: the summary model unless `settings.model` names another. */
  primaryModel: string;
  modelSpec: ModelSpecLookup;
  estimators: TokenEstimators;
  storage: Storage;
  transcripts: TranscriptCache;
  log: Logger;
  /** The PreCompact / PostCompact hooks of one compaction; absent: none. */
  hooks?: (fields: HookTurnFields, log: Logger) => CompactionHooks;
}

/** One turn as its auto-compact shaper sees it. */
export interface CompactionTurn {
  journal: TurnJournal;
  meter: ContextMeter;
  fields: HookTurnFields;
  log: Logger;
  /** Records a model call's usage row through the turn (as the engine records the loop's calls). */
  recordCall(usage: Usage, model: string): void;
  /** Tells the person in chat (one short line); must not throw. */
  notify(text: string): Promise<void>;
  /** The turn offers `memory_save` (see `CompactionShaperOptions.remindToSave`). */
  remindToSave?: boolean;
}

/** How a compaction asked for outside a turn (`/compact`, the control API) ended. */
export type ManualCompactResult =
  | { outcome: 'compacted'; tokensBefore: number; tokensAfter: number; throughSeq: number }
  /** Too little history: nothing before the kept turns, or a summary no smaller than what it would replace (no boundary written). */
  | { outcome: 'nothing' }
  /** A turn of the session is running or queued: try again once it has finished. */
  | { outcome: 'busy' }
  /** The summary call failed; nothing changed. */
  | { outcome: 'failed'; error: string };

/** Who asks for a compaction outside a turn. */
export interface ManualCompactRequest {
  session: Session;
  /** The agent's system prompt and tools: the session's request size is measured with them. */
  agent: { id: string; system: SystemBlock[]; tools: AnyTool[] };
  instructions?: string;
  /** The principal the usage row is counted to (null: an operator). */
  principalId: string | null;
}

/** The engine's compaction: a shaper per turn, manual compaction, and the circuit breaker shared by all turns. */
export class EngineCompaction {
  readonly breaker: CompactionBreaker;

  constructor(private readonly options: EngineCompactionOptions) {
    this.breaker = new CompactionBreaker(options.settings.maxReactivePerHour);
  }

  private summaryModel(): string {
    return this.options.settings.model ?? this.options.primaryModel;
  }

  /** The auto-compact shaper of one turn (goes last in the chain). */
  shaper(turn: CompactionTurn): RequestShaper {
    const { journal } = turn;
    const context: CompactionContext = {
      settings: this.options.settings,
      model: this.options.model,
      summaryModel: this.summaryModel(),
      window: turn.meter.window,
      summaryContextWindow: this.options.modelSpec(this.summaryModel()).contextWindow,
      estimate: (messages) => turn.meter.estimate(messages),
      writer: {
        transcript: async () => {
          await journal.flush();
          return journal.transcript();
        },
        append: async (entry) => {
          journal.add([entry]);
          await journal.flush();
        },
      },
      turnId: turn.fields.turnId,
      recordCall: (usage, model) => turn.recordCall(usage, model),
      ...(this.options.hooks ? { hooks: this.options.hooks(turn.fields, turn.log) } : {}),
      notify: (text) => turn.notify(text),
      log: turn.log,
    };
    return compactionShaper({
      context,
      meter: turn.meter,
      breaker: this.breaker,
      sessionId: turn.fields.sessionId,
      ...(turn.remindToSave ? { remindToSave: true } : {}),
    });
  }

  /**
   * Compacts a session now, outside a turn (the caller makes sure none runs): summarizes all but
   * the last turns and appends a `manual` boundary. Its usage row is recorded at once.
   */
  async manual(req: ManualCompactRequest): Promise<ManualCompactResult> {
    const { options } = this;
    const { session } = req;
    const spec = options.modelSpec(options.primaryModel);
    const meter = contextMeter(spec, options.estimators.of(spec.name), req.agent.system, req.agent.tools.map(toolSpec));
    const fields: HookTurnFields = { sessionId: session.id, turnId: `compaction:${randomUUID()}`, agentId: req.agent.id };
    const log = options.log.child({ sessionId: session.id, compaction: 'manual' });
    const context: CompactionContext = {
      settings: options.settings,
      model: options.model,
      summaryModel: this.summaryModel(),
      window: meter.window,
      summaryContextWindow: options.modelSpec(this.summaryModel()).contextWindow,
      estimate: (messages) => meter.estimate(messages),
      writer: {
        transcript: () => options.transcripts.get(session.id),
        append: async (entry) => {
          await options.transcripts.append(session.id, [entry]);
        },
      },
      turnId: null,
      recordCall: async (usage, model) => {
        await options.storage.usage
          .record(
            usageRecordOf({ usage, model }, options.modelSpec(model).price, {
              turnId: fields.turnId,
              sessionId: session.id,
              principalId: req.principalId,
              agentId: req.agent.id,
              channel: `${session.channel}:${session.account}`,
            }),
          )
          .catch((err: unknown) => log.error({ err }, 'could not record the summary call’s usage'));
      },
      ...(options.hooks ? { hooks: options.hooks(fields, log) } : {}),
      notify: async () => {},
      log,
    };
    const history = rebuildMessages(await options.transcripts.get(session.id)).messages;
    const outcome = await compactHistory(context, {
      trigger: 'manual',
      history,
      send: history,
      signal: new AbortController().signal,
      ...(req.instructions?.trim() ? { instructions: req.instructions.trim() } : {}),
    });
    if (outcome.ok) {
      const { tokensBefore, tokensAfter, throughSeq } = outcome.boundary;
      return { outcome: 'compacted', tokensBefore, tokensAfter, throughSeq };
    }
    if (outcome.reason === 'failed') return { outcome: 'failed', error: outcome.error ?? 'the summary call failed' };
    return { outcome: 'nothing' };
  }
}
