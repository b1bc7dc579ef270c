import {
  chooseCut,
  compactedHistory,
  droppedNote,
  dropOldestTurns,
  type Message,
  messageText,
  type ModelClient,
  type ModelResponse,
  type Shaped,
  summaryRequest,
  type Usage,
} from '@switchboard/agent';
import type { Logger } from 'pino';
import type { NewEntry } from '../storage.js';
import { rebuildMessages } from '../transcript.js';
import { type CompactPayload, lastBoundary } from './compaction-view.js';

/** The resolved `context.compaction` settings (docs/context.md, "Compaction"). */
export interface CompactionSettings {
  /** Auto-compaction on (false: only reactive and manual compaction). */
  auto: boolean;
  /** Auto-compact once a request measures past `threshold · W`. */
  threshold: number;
  /** Turns kept after the cut (fewer when they alone are too big). */
  keepTurns: number;
  /** The model that writes summaries; absent: the turn's primary model. */
  model?: string;
  /** How long a summary call may take before the compaction counts as failed. */
  timeoutMs: number;
  /** Reactive compactions per session per rolling hour at most (the circuit breaker). */
  maxReactivePerHour: number;
  /** The summary's `max_tokens`. */
  summaryMaxTokens: number;
}

/** Default settings (what the config's defaults resolve to). */
export const DEFAULT_COMPACTION: CompactionSettings = {
  auto: true,
  threshold: 0.65,
  keepTurns: 2,
  timeoutMs: 120_000,
  maxReactivePerHour: 3,
  summaryMaxTokens: 4_000,
};

/** What a compaction hook is told (PreCompact / PostCompact payloads without the turn fields). */
export interface CompactionHookEvent {
  trigger: CompactPayload['trigger'];
  tokensBefore: number;
  instructions?: string;
  /** PostCompact only. */
  tokensAfter?: number;
  throughSeq?: number;
}

/**
 * The PreCompact / PostCompact hooks of one compaction. Contract: never throw. `pre` may return
 * extra summary instructions (the hooks' `additionalContext`).
 */
export interface CompactionHooks {
  pre(event: CompactionHookEvent): Promise<string | undefined>;
  post(event: CompactionHookEvent): Promise<void>;
}

/** Where a compaction reads and writes the session: a turn's journal, or the store outside a turn. */
export interface BoundaryWriter {
  /** Makes everything the session holds durable and returns its transcript (stored entries, with seqs). */
  transcript(): Promise<NewEntry[]>;
  /** Appends the boundary entry durably. */
  append(entry: NewEntry): Promise<void>;
}

/** What one compaction works with. */
export interface CompactionContext {
  settings: CompactionSettings;
  model: ModelClient;
  /** The model that writes the summary (`settings.model` or the primary). */
  summaryModel: string;
  /** `W` of the session's model: thresholds are fractions of it. */
  window: number;
  /** The summary model's whole context window (input and output): its request and answer must fit it. */
  summaryContextWindow: number;
  /** Estimated tokens of a request sending `messages` (the session's meter). */
  estimate(messages: readonly Message[]): number;
  writer: BoundaryWriter;
  /** The turn the boundary belongs to (null outside a turn). */
  turnId: string | null;
  /** Records the summary call's usage row. Must not throw. */
  recordCall(usage: Usage, model: string): void | Promise<void>;
  hooks?: CompactionHooks;
  /** Tells the person in chat, in one short line. Must not throw. */
  notify(text: string): Promise<void>;
  log: Logger;
}

/** How one compaction ended. */
export type CompactOutcome =
  | { ok: true; shaped: Shaped & { history: Message[] }; boundary: CompactPayload }
  /**
   * `nothing`: no turn boundary before the kept turns; `no_gain`: the summary would not make the
   * request smaller than what it replaces (a short history), so no boundary is written;
   * `unaligned`: the loop's history is not the stored one; `failed`: the summary call failed.
   */
  | { ok: false; reason: 'nothing' | 'no_gain' | 'unaligned' | 'failed'; error?: string };

const SUMMARY_SYSTEM = 'You write faithful, structured summaries of conversations between a person and their assistant.';

/** Where the cut lands in the stored transcript: the loop's history must be the one the store rebuilds. */
async function locate(ctx: CompactionContext, history: readonly Message[]) {
  const entries = await ctx.writer.transcript();
  const rebuilt = rebuildMessages(entries);
  const aligned = rebuilt.messages.length === history.length && rebuilt.messages.every((m, i) => m.role === history[i]!.role);
  return { aligned, seqs: rebuilt.seqs, previous: lastBoundary(entries)?.payload ?? null };
}

/** The summary call: no tools, bounded input, its own timeout; throws what the model client throws. */
async function summarize(ctx: CompactionContext, head: readonly Message[], instructions: string | undefined, signal: AbortSignal): Promise<ModelResponse> {
  // The request stays under the threshold, and with its answer inside the summary model's window:
  // shrink the serialized part until it measures so.
  const room = Math.max(0, ctx.summaryContextWindow - ctx.settings.summaryMaxTokens);
  const budget = Math.max(1, Math.min(Math.floor(ctx.settings.threshold * ctx.window), room));
  let maxChars = Math.max(1_000, Math.floor(budget * 3));
  let messages = summaryRequest(head, { maxChars, ...(instructions ? { instructions } : {}) });
  while (ctx.estimate(messages) > budget && maxChars > 1_000) {
    maxChars = Math.max(1_000, Math.floor(maxChars * 0.7));
    messages = summaryRequest(head, { maxChars, ...(instructions ? { instructions } : {}) });
  }
  const timeout = AbortSignal.timeout(ctx.settings.timeoutMs);
  const maxTokens = Math.max(256, Math.min(ctx.settings.summaryMaxTokens, ctx.summaryContextWindow - ctx.estimate(messages)));
  const stream = ctx.model.stream(
    { model: ctx.summaryModel, system: [{ type: 'text', text: SUMMARY_SYSTEM }], messages, tools: [], maxTokens },
    AbortSignal.any([signal, timeout]),
  );
  for (;;) {
    const step = await stream.next();
    if (step.done) return step.value;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Summarizes everything before the cut (a turn start K turns back) and appends the boundary:
 * flushes the session, calls the summary model, records its usage, runs the hooks, appends the
 * `compact` entry and tells the person. Never throws: a failure (model error, timeout, abort,
 * empty summary) is `{ ok: false, reason: 'failed' }` and leaves the transcript as it was.
 */
export async function compactHistory(
  ctx: CompactionContext,
  req: { trigger: CompactPayload['trigger']; history: readonly Message[]; send: readonly Message[]; signal: AbortSignal; instructions?: string },
): Promise<CompactOutcome> {
  const { settings, log } = ctx;
  try {
    const located = await locate(ctx, req.history);
    if (!located.aligned) {
      log.warn({ trigger: req.trigger }, 'compaction skipped: the turn history does not match the stored transcript');
      return { ok: false, reason: 'unaligned' };
    }
    const cut = chooseCut(req.history, {
      keepTurns: settings.keepTurns,
      maxTailTokens: Math.floor(settings.threshold * ctx.window * 0.5),
      tokens: ctx.estimate,
    });
    const throughSeq = cut === null ? undefined : located.seqs[cut - 1];
    if (cut === null || throughSeq === undefined) return { ok: false, reason: 'nothing' };
    const send = req.send.length === req.history.length ? req.send : req.history;
    const tokensBefore = ctx.estimate(send);
    const extra = await ctx.hooks?.pre({ trigger: req.trigger, tokensBefore, ...(req.instructions ? { instructions: req.instructions } : {}) });
    const instructions = [req.instructions?.trim(), extra?.trim()].filter((s): s is string => !!s).join('\n');
    const response = await summarize(ctx, send.slice(0, cut), instructions || undefined, req.signal);
    await ctx.recordCall(response.usage, response.model);
    const summary = messageText(response.message).trim();
    if (!summary) throw new Error('the summary model answered with no text');
    const shaped = { send: compactedHistory(summary, send.slice(cut)), history: compactedHistory(summary, req.history.slice(cut)) };
    const tokensAfter = ctx.estimate(shaped.send);
    if (tokensAfter >= tokensBefore) {
      log.info({ trigger: req.trigger, tokensBefore, tokensAfter }, 'compaction skipped: the summary is not smaller than what it replaces');
      return { ok: false, reason: 'no_gain' };
    }
    const boundary: CompactPayload = {
      summary,
      throughSeq,
      trigger: req.trigger,
      tokensBefore,
      tokensAfter,
      model: response.model,
      ...(req.instructions?.trim() ? { instructions: req.instructions.trim() } : {}),
    };
    await ctx.writer.append({ kind: 'compact', turnId: ctx.turnId, payload: boundary });
    log.info({ trigger: req.trigger, throughSeq, tokensBefore, tokensAfter: boundary.tokensAfter }, 'conversation compacted');
    await ctx.hooks?.post({ trigger: req.trigger, tokensBefore, tokensAfter: boundary.tokensAfter, throughSeq });
    await ctx.notify(`Compacted the conversation to stay within the model's context (about ${tokensBefore} → ${boundary.tokensAfter} tokens).`);
    return { ok: true, shaped, boundary };
  } catch (err) {
    log.warn({ err, trigger: req.trigger }, 'compaction failed; the conversation goes on uncompacted');
    return { ok: false, reason: 'failed', error: describe(err) };
  }
}

/**
 * The reactive last resort: drops the oldest turns of the history (pairs intact) until the rest
 * measures under half the threshold, persisted as a boundary that keeps the previous summary and
 * notes the drop, so later turns do not hit the same refusal. Null when there is nothing to drop
 * or the history is not the stored one. Never throws.
 */
export async function dropTurns(ctx: CompactionContext, req: { history: readonly Message[]; send: readonly Message[] }): Promise<CompactOutcome> {
  try {
    const located = await locate(ctx, req.history);
    if (!located.aligned) return { ok: false, reason: 'unaligned' };
    const send = req.send.length === req.history.length ? req.send : req.history;
    const dropped = dropOldestTurns(send, Math.floor(ctx.settings.threshold * ctx.window * 0.5), ctx.estimate);
    const throughSeq = dropped ? located.seqs[dropped.cut - 1] : undefined;
    if (!dropped || throughSeq === undefined) return { ok: false, reason: 'nothing' };
    const note = droppedNote(dropped.turns);
    const summary = located.previous ? `${located.previous.summary}\n\n${note}` : note;
    const shaped = { send: compactedHistory(summary, send.slice(dropped.cut)), history: compactedHistory(summary, req.history.slice(dropped.cut)) };
    const boundary: CompactPayload = {
      summary,
      throughSeq,
      trigger: 'reactive',
      tokensBefore: ctx.estimate(send),
      tokensAfter: ctx.estimate(shaped.send),
      model: located.previous?.model ?? '',
      dropped: dropped.turns,
    };
    await ctx.writer.append({ kind: 'compact', turnId: ctx.turnId, payload: boundary });
    ctx.log.warn({ dropped: dropped.turns, throughSeq }, 'oldest turns dropped from the context after prompt_too_long');
    await ctx.notify(
      `The conversation no longer fitted the model, so its ${dropped.turns} oldest ${dropped.turns === 1 ? 'turn was' : 'turns were'} dropped from the context (the transcript keeps them).`,
    );
    return { ok: true, shaped, boundary };
  } catch (err) {
    ctx.log.warn({ err }, 'dropping the oldest turns failed');
    return { ok: false, reason: 'failed', error: describe(err) };
  }
}
