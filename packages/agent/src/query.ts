import type { AgentEvent, QueryResult } from './events.js';
import { type Message, type SystemBlock, type ToolResultBlock, toolUses } from './messages.js';
import { abortableSleep, type ModelCallSettings, modelRoute, type RetryPolicy, type Sleep } from './model-call.js';
import type { ModelClient, ModelResponse } from './model.js';
import { callModelWithOutputRecovery, finalOutputCap, settleReplyToolUses } from './output-recovery.js';
import { appendContinuation, appendToolResults, injectSteered } from './steering.js';
import { settleToolUses } from './tool-batch.js';
import { toolSpec } from './tool-exec.js';
import type { ResultBudgets } from './result-budget.js';
import type { ToolEnvironment, ToolProgressSink } from './tool-prepare.js';
import type { BeforeCall, CallInfo, RequestShaper, Shaped } from './shaping.js';
import { offeredCall, type ToolOffer } from './tool-offer.js';
import type { AfterTool, AnyTool, CanUseTool, ToolContext } from './tool.js';
import { afterFinalReply, endTurn, maxTurnsResult, modelFailureResult, stoppedResult } from './turn-end.js';

export { backoffDelay, type RetryPolicy } from './model-call.js';

/**
 * Ends the turn early after a batch of tool results (e.g. the denial limit).
 *
 * When: synchronously, once after each batch of tool results of a model reply was added to the
 * conversation, unless the signal fired during the batch; not after the open tool uses of a
 * resumed turn are settled. Before the next model call (so before the `maxTurns` check).
 *
 * May: return a {@link QueryResult} to end the turn with it — the loop yields a terminal event
 * with its reason and error and returns that very object; return null to go on.
 *
 * Must not: throw, block, or return a result it would not stand by (it is not asked again).
 *
 * On throw: the query generator throws that error, with no terminal event (the engine fails the
 * turn as an internal error).
 */
export type ShouldStop = () => QueryResult | null;

/**
 * Hands over the messages that arrived while the turn ran, for steer mode.
 *
 * When: synchronously, once before every model call, the first included (after the abort and
 * `maxTurns` checks, so not when the turn ends instead); never while tool uses are settled.
 *
 * May: return the waiting texts — each becomes one text block, added to the trailing user
 * message (the last tool results) or as a new user message, and announced by one `user_message`
 * event holding exactly those blocks, yielded before the call's first event; return [] for none.
 *
 * Must not: throw, or return a text twice: what it returns is consumed (the caller records it
 * when it sees the `user_message` event; the loop never asks for it again).
 *
 * On throw: the query generator throws that error, with no terminal event.
 */
export type DrainInjected = () => string[];

export interface QueryParams {
  model: ModelClient;
  modelName: string;
  /** Used for the rest of the turn once `modelName`'s retry budget is spent. */
  fallbackModel?: string;
  maxTokens: number;
  /** The cap a reply cut by `max_tokens` inside a tool call is retried with, once (default `maxTokens`: no retry). */
  maxOutputTokens?: number;
  system: SystemBlock[];
  /** The conversation so far. If it ends with an assistant message holding tool_use blocks, those calls are settled first (resume). */
  messages: Message[];
  tools: AnyTool[];
  /** Decides every tool use before it runs; see {@link CanUseTool} for its contract. */
  canUseTool: CanUseTool;
  signal: AbortSignal;
  /** Model calls per turn; the turn ends `max_turns` when it wants one more. */
  maxTurns: number;
  toolContext: Omit<ToolContext, 'signal' | 'toolUseId'>;
  toolTimeoutMs: number;
  /** Per-tool overrides of toolTimeoutMs, by tool name. */
  toolTimeouts?: Readonly<Record<string, number>>;
  /** The tool-result budget (default `DEFAULT_RESULT_BUDGETS`); see {@link ResultBudgets}. */
  resultBudgets?: ResultBudgets;
  retry: RetryPolicy;
  /** How often a `max_tokens` stop is answered with "continue" before the turn ends cut. */
  maxContinuations: number;
  /** Results already known for the trailing tool_use blocks (resume), by tool_use id. */
  presetResults?: ReadonlyMap<string, ToolResultBlock>;
  /** Messages that arrived during the turn, injected at the next model call (steer mode); see {@link DrainInjected}. */
  drainInjected?: DrainInjected;
  /** Called after each tool call with its result; text it returns is added to the result the model sees (PostToolUse hooks); see {@link AfterTool}. */
  afterTool?: AfterTool;
  /** Checked after each batch of tool calls: a result ends the turn (e.g. the denial limit); see {@link ShouldStop}. */
  shouldStop?: ShouldStop;
  /** Context management before every model call, cheapest first; see {@link RequestShaper}. */
  shapers?: readonly RequestShaper[];
  /** Checked before every model call (budgets): a result ends the turn; see {@link BeforeCall}. */
  beforeCall?: BeforeCall;
  /** Sleeps between retries; replaceable so tests need no real waits. See {@link Sleep}. */
  sleep?: Sleep;
  /** The tool schemas and extra system blocks of each model call (deferred tool schemas); absent: every tool's schema, `system` alone. See {@link ToolOffer}. */
  offer?: ToolOffer;
  /** Receives running tools' progress reports (see `ToolContext.progress`); the engine renders them as `tool_progress` events. */
  onToolProgress?: ToolProgressSink;
  /** This loop runs a subagent: denials are worded for one (see `denialText`). */
  subagent?: boolean;
}

/** The tool environment of one turn. */
function toolEnvironment(params: QueryParams): ToolEnvironment {
  return {
    tools: new Map(params.tools.map((tool) => [tool.name, tool])),
    canUseTool: params.canUseTool,
    signal: params.signal,
    toolContext: params.toolContext,
    toolTimeoutMs: params.toolTimeoutMs,
    ...(params.toolTimeouts ? { toolTimeouts: params.toolTimeouts } : {}),
    ...(params.afterTool ? { afterTool: params.afterTool } : {}),
    ...(params.resultBudgets ? { resultBudgets: params.resultBudgets } : {}),
    ...(params.onToolProgress ? { onToolProgress: params.onToolProgress } : {}),
    ...(params.subagent ? { subagent: true } : {}),
  };
}

/** The model-call settings of one turn. */
function modelCallSettings(params: QueryParams): ModelCallSettings {
  return {
    client: params.model,
    system: params.system,
    tools: params.tools.map(toolSpec),
    maxTokens: params.maxTokens,
    retry: params.retry,
    signal: params.signal,
    sleep: params.sleep ?? abortableSleep,
  };
}

/** The tool uses a resumed conversation left open: those of a trailing assistant message. */
function openToolUses(messages: readonly Message[]) {
  const last = messages.at(-1);
  return last?.role === 'assistant' ? toolUses(last) : [];
}

/** Runs the shaper chain over the loop's history; replaces the history when a shaper moved the boundary. */
async function shapeRequest(messages: Message[], shapers: readonly RequestShaper[], info: CallInfo): Promise<Message[]> {
  let send: Message[] = messages;
  for (const shaper of shapers) {
    const shaped: Shaped = await shaper.shape(messages, send, info);
    if (shaped.history) messages.splice(0, messages.length, ...shaped.history);
    send = shaped.send;
  }
  return send;
}

/** Asks the chain, in order, for a smaller request after a `prompt_too_long`; null when no shaper has one. */
async function recoverRequest(
  messages: Message[],
  send: Message[],
  shapers: readonly RequestShaper[],
  info: CallInfo,
  attempt: number,
): Promise<Message[] | null> {
  for (const shaper of shapers) {
    const shaped = (await shaper.recover?.(messages, send, { ...info, attempt })) ?? null;
    if (!shaped) continue;
    if (shaped.history) messages.splice(0, messages.length, ...shaped.history);
    return shaped.send;
  }
  return null;
}

/** Whether a thrown value is the API's refusal of a request as too long. */
function isPromptTooLong(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { kind?: unknown }).kind === 'prompt_too_long';
}

/**
 * The query loop: model call → tool uses → permission → tool execution → loop, as one async
 * generator every channel consumes. Yields AgentEvents; returns why it stopped (and yields that as
 * a last `terminal` event, except when a hook throws — then the generator throws).
 *
 * Each round: stop if aborted or out of model calls; inject steered messages
 * ({@link injectSteered}); ask `beforeCall` (budgets); shape the request ({@link RequestShaper}:
 * a `prompt_too_long` asks the chain for a smaller request and sends that); call the model ({@link callModelWithOutputRecovery}: a tool call cut by
 * `max_tokens` is retried once at `maxOutputTokens`); on a reply without tool uses, continue a cut
 * reply or complete ({@link afterFinalReply}); else settle its tool uses ({@link settleReplyToolUses}:
 * a call still cut gets an is_error result asking for smaller parts) and ask `shouldStop`.
 */
export async function* query(params: QueryParams): AsyncGenerator<AgentEvent, QueryResult, void> {
  const messages: Message[] = [...params.messages];
  const tools = toolEnvironment(params);
  const modelCall = modelCallSettings(params);
  const route = modelRoute(params.modelName, params.fallbackModel);

  const open = openToolUses(messages);
  if (open.length > 0) {
    const results = yield* settleToolUses(open, tools, params.presetResults);
    if (!results) return yield* endTurn(stoppedResult());
    appendToolResults(messages, results);
  }

  let continuations = 0;
  for (let calls = 0; ; calls++) {
    if (params.signal.aborted) return yield* endTurn(stoppedResult());
    if (calls >= params.maxTurns) return yield* endTurn(maxTurnsResult(params.maxTurns));
    const steered = injectSteered(messages, params.drainInjected);
    if (steered) yield { type: 'user_message', message: steered };

    const info: CallInfo = { call: calls, model: route.current, signal: params.signal };
    const refused = params.beforeCall ? await params.beforeCall(info) : null;
    if (refused) return yield* endTurn(refused);
    const shapers = params.shapers ?? [];
    let send = shapers.length > 0 ? await shapeRequest(messages, shapers, info) : messages;
    if (params.offer) Object.assign(modelCall, offeredCall(params.system, params.offer));

    let response: ModelResponse;
    for (let recoveries = 0; ; recoveries++) {
      try {
        response = yield* callModelWithOutputRecovery(send, route, modelCall, params.maxOutputTokens);
        break;
      } catch (err) {
        const smaller = isPromptTooLong(err) && !params.signal.aborted ? await recoverRequest(messages, send, shapers, info, recoveries) : null;
        if (!smaller) return yield* endTurn(modelFailureResult(err, params.signal, recoveries));
        send = smaller;
      }
    }
    for (const shaper of shapers) shaper.observe?.(send, response.usage);
    yield { type: 'usage', usage: response.usage, model: response.model };
    const { message } = response;
    // The API rejects empty assistant content, so an empty reply is kept out of the history.
    if (message.content.length > 0) messages.push(message);
    yield { type: 'assistant_message', message, model: response.model };

    const uses = toolUses(message);
    if (uses.length === 0) {
      const next = afterFinalReply(response.stopReason, continuations, params.maxContinuations);
      if (next !== 'continue') return yield* endTurn(next);
      continuations++;
      yield { type: 'user_message', message: appendContinuation(messages) };
      continue;
    }
    const results = yield* settleReplyToolUses(uses, response.cutToolUseId, tools, finalOutputCap(params.maxTokens, params.maxOutputTokens));
    if (!results) return yield* endTurn(stoppedResult());
    appendToolResults(messages, results);
    const stop = params.shouldStop?.();
    if (stop) return yield* endTurn(stop);
  }
}
