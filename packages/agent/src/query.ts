import { ModelError } from './errors.js';
import type { AgentEvent, QueryResult, TerminalReason } from './events.js';
import { toolUses, type AssistantMessage, type Message, type SystemBlock, type ToolResultBlock, type ToolUseBlock, type UserBlock } from './messages.js';
import type { ModelClient, ModelRequest, ModelResponse } from './model.js';
import { describeZodError, runTool, toolSpec, type ToolRunOutcome } from './tool-exec.js';
import type { AnyTool, CanUseTool, ToolContext } from './tool.js';

export interface RetryPolicy {
  /** Retries per model before giving up (or switching to the fallback model). */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface QueryParams {
  model: ModelClient;
  modelName: string;
  /** Used for the rest of the turn once `modelName`'s retry budget is spent. */
  fallbackModel?: string;
  maxTokens: number;
  system: SystemBlock[];
  /** The conversation so far. If it ends with an assistant message holding tool_use blocks, those calls are settled first (resume). */
  messages: Message[];
  tools: AnyTool[];
  canUseTool: CanUseTool;
  signal: AbortSignal;
  maxTurns: number;
  toolContext: Omit<ToolContext, 'signal' | 'toolUseId'>;
  toolTimeoutMs: number;
  /** Per-tool overrides of toolTimeoutMs, by tool name. */
  toolTimeouts?: Readonly<Record<string, number>>;
  retry: RetryPolicy;
  /** How often a `max_tokens` stop is answered with "continue" before the turn ends cut. */
  maxContinuations: number;
  /** Results already known for the trailing tool_use blocks (resume), by tool_use id. */
  presetResults?: ReadonlyMap<string, ToolResultBlock>;
  /** Messages that arrived during the turn, injected at the next model call (steer mode). */
  drainInjected?: () => string[];
  /**
   * Called after each tool call with its result; text it returns is added to the result the model
   * sees (PostToolUse hooks). Contract: must not throw.
   */
  afterTool?: (call: { tool: AnyTool; input: unknown; result: ToolResultBlock; ctx: ToolContext }) => Promise<string | undefined>;
  /** Checked after each batch of tool calls: a result ends the turn (e.g. the denial limit). */
  shouldStop?: () => QueryResult | null;
  /** Sleeps between retries; replaceable so tests need no real waits. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const CONTINUE_PROMPT = 'Your previous reply was cut off by the output token limit. Continue exactly where you stopped, without repeating anything.';

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ModelError('aborted', 'The model call was aborted.'));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new ModelError('aborted', 'The model call was aborted.'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Exponential backoff with up to 25 % jitter, never above maxDelayMs. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random = Math.random): number {
  const raw = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(raw * (1 - 0.25 * random()));
}

function errorResult(id: string, content: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: id, content, is_error: true };
}

function denialText(kind: string, reason: string): string {
  if (kind === 'person') {
    return `The person declined this tool call (${reason}). Do not try it again or work around it: stop and wait for their instructions.`;
  }
  return `Permission denied by ${kind}: ${reason}. You may try another reasonable way, but do not work around the intent of this denial; if the action is essential, stop and explain what you need.`;
}

interface Prepared {
  use: ToolUseBlock;
  tool?: AnyTool;
  input?: unknown;
  /** Set when the call is settled without running. */
  outcome?: ToolRunOutcome;
}

/**
 * The query loop: model call → tool_use → permission → tool execution → loop, as one async
 * generator every channel consumes. Yields AgentEvents; returns why it stopped.
 */
export async function* query(p: QueryParams): AsyncGenerator<AgentEvent, QueryResult, void> {
  const messages: Message[] = [...p.messages];
  const byName = new Map(p.tools.map((t) => [t.name, t]));
  const specs = p.tools.map(toolSpec);
  const sleep = p.sleep ?? abortableSleep;
  let currentModel = p.modelName;
  let usedFallback = false;
  let continuations = 0;

  const finish = (reason: TerminalReason, error?: string): QueryResult => (error ? { reason, error } : { reason });

  // Settles one batch of tool calls, yielding start/end events; returns results in request order.
  async function* settle(uses: ToolUseBlock[], preset?: ReadonlyMap<string, ToolResultBlock>) {
    const results: ToolResultBlock[] = [];
    let i = 0;
    while (i < uses.length) {
      if (p.signal.aborted) return null;
      // A run of consecutive concurrency-safe calls forms one parallel batch; others run alone.
      const first = byName.get(uses[i]!.name);
      let j = i + 1;
      if (first?.concurrencySafe) {
        while (j < uses.length && byName.get(uses[j]!.name)?.concurrencySafe) j++;
      }
      const batch: Prepared[] = [];
      for (const use of uses.slice(i, j)) {
        const known = preset?.get(use.id);
        if (known) {
          batch.push({ use, outcome: { result: known } });
          continue;
        }
        batch.push(await prepare(use));
        if (p.signal.aborted) return null;
      }
      const runnable = batch.filter((b) => !b.outcome);
      for (const b of runnable) {
        yield { type: 'tool_start', toolUseId: b.use.id, name: b.use.name, input: b.input, readOnly: b.tool!.readOnly } as AgentEvent;
      }
      await Promise.all(
        runnable.map(async (b) => {
          const timeout = (p.toolTimeouts && Object.hasOwn(p.toolTimeouts, b.tool!.name) ? p.toolTimeouts[b.tool!.name] : undefined) ?? p.toolTimeoutMs;
          const ctx = { ...p.toolContext, signal: p.signal, toolUseId: b.use.id };
          const outcome = await runTool(b.tool!, b.input, ctx, timeout);
          const extra = p.afterTool ? await p.afterTool({ tool: b.tool!, input: b.input, result: outcome.result, ctx }) : undefined;
          if (extra) outcome.result = { ...outcome.result, content: `${outcome.result.content}\n\n${extra}` };
          b.outcome = outcome;
        }),
      );
      for (const b of batch) {
        const o = b.outcome!;
        // Preset results were persisted by whoever supplied them.
        if (!preset?.has(b.use.id)) {
          yield {
            type: 'tool_end',
            toolUseId: b.use.id,
            name: b.use.name,
            result: o.result,
            ...(o.fullContent !== undefined ? { fullContent: o.fullContent } : {}),
          } as AgentEvent;
        }
        results.push(o.result);
      }
      if (p.signal.aborted) return null;
      i = j;
    }
    return results;
  }

  async function prepare(use: ToolUseBlock): Promise<Prepared> {
    const tool = byName.get(use.name);
    if (!tool) {
      const names = [...byName.keys()].join(', ') || 'none';
      return { use, outcome: { result: errorResult(use.id, `There is no tool named "${use.name}". Available tools: ${names}.`) } };
    }
    const parsed = tool.input.safeParse(use.input);
    if (!parsed.success) {
      return { use, tool, outcome: { result: errorResult(use.id, `Invalid input for ${tool.name}: ${describeZodError(parsed.error)}`) } };
    }
    const ctx: ToolContext = { ...p.toolContext, signal: p.signal, toolUseId: use.id };
    try {
      if (tool.validateInput) {
        const v = await tool.validateInput(parsed.data, ctx);
        if (!v.ok) return { use, tool, outcome: { result: errorResult(use.id, `Invalid input for ${tool.name}: ${v.message}`) } };
      }
      const decision = await p.canUseTool(tool, parsed.data, ctx);
      if (decision.behavior === 'deny') {
        return { use, tool, outcome: { result: errorResult(use.id, denialText(decision.kind, decision.reason)) } };
      }
      let input: unknown = parsed.data;
      if (decision.updatedInput !== undefined) {
        const again = tool.input.safeParse(decision.updatedInput);
        if (!again.success) {
          return { use, tool, outcome: { result: errorResult(use.id, `The rewritten input for ${tool.name} is invalid: ${describeZodError(again.error)}`) } };
        }
        input = again.data;
      }
      return { use, tool, input };
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      return { use, tool, outcome: { result: errorResult(use.id, `The permission check for ${tool.name} failed: ${msg}`) } };
    }
  }

  // One model call with retries, backoff and fallback; text deltas pass through.
  async function* callModel(): AsyncGenerator<AgentEvent, ModelResponse, void> {
    let attempt = 0;
    for (;;) {
      const req: ModelRequest = { model: currentModel, system: p.system, messages, tools: specs, maxTokens: p.maxTokens };
      const stream = p.model.stream(req, p.signal);
      try {
        for (;;) {
          const step = await stream.next();
          if (step.done) return step.value;
          yield { type: 'text_delta', text: step.value.text };
        }
      } catch (err) {
        const e = err instanceof ModelError ? err : new ModelError('connection', 'The model call failed unexpectedly.', { cause: err });
        if (e.kind === 'aborted' || p.signal.aborted) throw e;
        if (e.streamedText) yield { type: 'attempt_reset', reason: e.message };
        if (e.retryable && attempt < p.retry.maxRetries) {
          const delay = e.retryAfterMs !== undefined ? e.retryAfterMs : backoffDelay(attempt, p.retry);
          attempt++;
          yield { type: 'model_retry', attempt, delayMs: delay, error: e.message, model: currentModel, fallback: false };
          await sleep(delay, p.signal);
          continue;
        }
        if (e.retryable && p.fallbackModel && !usedFallback && p.fallbackModel !== currentModel) {
          usedFallback = true;
          currentModel = p.fallbackModel;
          attempt = 0;
          yield { type: 'model_retry', attempt: 0, delayMs: 0, error: e.message, model: currentModel, fallback: true };
          continue;
        }
        throw e;
      }
    }
  }

  // Resume: settle tool calls the previous process left open.
  const last = messages.at(-1);
  if (last?.role === 'assistant' && toolUses(last).length > 0) {
    const results = yield* settle(toolUses(last), p.presetResults);
    if (!results) {
      yield { type: 'terminal', reason: 'aborted', error: 'The turn was stopped.' };
      return finish('aborted', 'The turn was stopped.');
    }
    messages.push({ role: 'user', content: results });
  }

  let calls = 0;
  for (;;) {
    if (p.signal.aborted) {
      yield { type: 'terminal', reason: 'aborted', error: 'The turn was stopped.' };
      return finish('aborted', 'The turn was stopped.');
    }
    if (calls >= p.maxTurns) {
      const error = `The turn stopped after ${p.maxTurns} model calls (the agent's maxTurns limit).`;
      yield { type: 'terminal', reason: 'max_turns', error };
      return finish('max_turns', error);
    }
    calls++;
    const injected = p.drainInjected?.() ?? [];
    if (injected.length > 0) {
      const blocks: UserBlock[] = injected.map((text) => ({ type: 'text', text }));
      const tail = messages.at(-1);
      if (tail?.role === 'user') tail.content = [...tail.content, ...blocks];
      else messages.push({ role: 'user', content: blocks });
      yield { type: 'user_message', message: { role: 'user', content: blocks } };
    }
    let response: ModelResponse;
    try {
      response = yield* callModel();
    } catch (err) {
      const e = err as ModelError;
      if (e.kind === 'aborted' || p.signal.aborted) {
        yield { type: 'terminal', reason: 'aborted', error: 'The turn was stopped.' };
        return finish('aborted', 'The turn was stopped.');
      }
      if (e.kind === 'prompt_too_long') {
        const error = 'This conversation has grown too long for the model. Start a new session to continue.';
        yield { type: 'terminal', reason: 'prompt_too_long', error };
        return finish('prompt_too_long', error);
      }
      const error = e.message || 'The model call failed.';
      yield { type: 'terminal', reason: 'model_error', error };
      return finish('model_error', error);
    }
    yield { type: 'usage', usage: response.usage, model: response.model };
    const message: AssistantMessage = response.message;
    const uses = toolUses(message);
    // The API rejects empty assistant content, so an empty reply is kept out of the history.
    if (message.content.length > 0) messages.push(message);
    yield { type: 'assistant_message', message, model: response.model };

    if (uses.length === 0) {
      if (response.stopReason === 'max_tokens') {
        if (continuations < p.maxContinuations) {
          continuations++;
          const blocks: UserBlock[] = [{ type: 'text', text: CONTINUE_PROMPT }];
          messages.push({ role: 'user', content: blocks });
          yield { type: 'user_message', message: { role: 'user', content: blocks } };
          continue;
        }
        const error = 'The answer was cut off: the model hit its output limit repeatedly.';
        yield { type: 'terminal', reason: 'completed', error };
        return finish('completed', error);
      }
      yield { type: 'terminal', reason: 'completed' };
      return finish('completed');
    }
    const results = yield* settle(uses);
    if (!results) {
      yield { type: 'terminal', reason: 'aborted', error: 'The turn was stopped.' };
      return finish('aborted', 'The turn was stopped.');
    }
    messages.push({ role: 'user', content: results });
    const stop = p.shouldStop?.();
    if (stop) {
      yield { type: 'terminal', reason: stop.reason, ...(stop.error ? { error: stop.error } : {}) };
      return stop;
    }
  }
}
