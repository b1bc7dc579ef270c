import type { AgentEvent } from './events.js';
import type { ToolResultBlock, ToolUseBlock } from './messages.js';
import { budgetResults, DEFAULT_RESULT_BUDGETS, toolResultBudget } from './result-budget.js';
import { runTool, type ToolRunOutcome } from './tool-exec.js';
import { type PreparedToolUse, prepareToolUse, presetToolUse, type ReadyToolUse, type ToolEnvironment, toolContextFor } from './tool-prepare.js';
import type { AnyTool } from './tool.js';

/** The events settling tool uses yields. */
export type ToolBatchEvent = Extract<AgentEvent, { type: 'tool_start' | 'tool_end' }>;

/**
 * Splits one reply's tool uses into the batches they run in, in request order: a run of
 * consecutive uses of concurrency-safe tools is one batch (run at once); any other use (an
 * unsafe or unknown tool) is a batch of its own.
 */
export function toolBatches(uses: readonly ToolUseBlock[], tools: ReadonlyMap<string, AnyTool>): ToolUseBlock[][] {
  const batches: ToolUseBlock[][] = [];
  let start = 0;
  while (start < uses.length) {
    let end = start + 1;
    if (tools.get(uses[start]!.name)?.concurrencySafe) {
      while (end < uses.length && tools.get(uses[end]!.name)?.concurrencySafe) end++;
    }
    batches.push(uses.slice(start, end));
    start = end;
  }
  return batches;
}

/** The timeout for one tool: its own entry in `toolTimeouts` (own properties only), else `toolTimeoutMs`. */
export function toolTimeoutFor(toolName: string, env: Pick<ToolEnvironment, 'toolTimeoutMs' | 'toolTimeouts'>): number {
  const own = env.toolTimeouts && Object.hasOwn(env.toolTimeouts, toolName) ? env.toolTimeouts[toolName] : undefined;
  return own ?? env.toolTimeoutMs;
}

/**
 * Runs the ready uses of one batch at once under their timeouts ({@link runTool}: a throw, timeout
 * or abort becomes an is_error result), applies the tool-result budget to the batch's results
 * together ({@link budgetResults}, within `messageRemaining` characters of the user message's
 * aggregate budget), then lets `env.afterTool` append its text to each. Results in `ready`'s
 * order. Throws only what `afterTool` throws.
 */
export async function runReadyToolUses(ready: readonly ReadyToolUse[], env: ToolEnvironment, messageRemaining: number): Promise<ToolRunOutcome[]> {
  const raw = await Promise.all(
    ready.map((call) => runTool(call.tool, call.input, toolContextFor(env, call.use.id, call.tool.name), toolTimeoutFor(call.tool.name, env))),
  );
  const budgets = env.resultBudgets ?? DEFAULT_RESULT_BUDGETS;
  const budgeted = budgetResults(
    ready.map((call, i) => ({ result: raw[i]!.result, budget: toolResultBudget(call.tool, budgets) })),
    messageRemaining,
  );
  return Promise.all(
    ready.map(async (call, i) => {
      const outcome: ToolRunOutcome = budgeted[i]!;
      const ctx = toolContextFor(env, call.use.id);
      const extra = env.afterTool ? await env.afterTool({ tool: call.tool, input: call.input, result: outcome.result, ctx }) : undefined;
      if (extra) outcome.result = { ...outcome.result, content: `${outcome.result.content}\n\n${extra}` };
      return outcome;
    }),
  );
}

/**
 * Settles one batch: prepares its uses one after another (preset results first), yields
 * `tool_start` for each use that will run, runs those at once ({@link runReadyToolUses}, within
 * `messageRemaining` characters of the message's aggregate result budget), then yields `tool_end`
 * for every use not settled by a preset, in request order. Returns the batch's results in request
 * order, or null when the signal fired after a preparation or while the batch ran (the turn ends
 * aborted; a batch that ran still reports its `tool_end` events first).
 */
export async function* settleBatch(
  batch: readonly ToolUseBlock[],
  env: ToolEnvironment,
  preset?: ReadonlyMap<string, ToolResultBlock>,
  messageRemaining = (env.resultBudgets ?? DEFAULT_RESULT_BUDGETS).maxMessageChars,
): AsyncGenerator<ToolBatchEvent, ToolResultBlock[] | null, void> {
  const prepared: PreparedToolUse[] = [];
  for (const use of batch) {
    const known = preset?.get(use.id);
    if (known) {
      prepared.push(presetToolUse(use, known));
      continue;
    }
    prepared.push(await prepareToolUse(use, env));
    if (env.signal.aborted) return null;
  }
  const ready = prepared.filter((entry): entry is ReadyToolUse => entry.status === 'ready');
  for (const call of ready) {
    yield { type: 'tool_start', toolUseId: call.use.id, name: call.use.name, input: call.input, readOnly: call.tool.readOnly };
  }
  const outcomes = await runReadyToolUses(ready, env, messageRemaining);
  const ran = new Map<PreparedToolUse, ToolRunOutcome>(ready.map((call, i) => [call, outcomes[i]!]));
  const results: ToolResultBlock[] = [];
  for (const entry of prepared) {
    const outcome = entry.status === 'settled' ? entry.outcome : ran.get(entry)!;
    if (entry.status === 'ready' || !entry.preset) {
      yield {
        type: 'tool_end',
        toolUseId: entry.use.id,
        name: entry.use.name,
        result: outcome.result,
        ...(outcome.fullContent !== undefined ? { fullContent: outcome.fullContent } : {}),
      };
    }
    results.push(outcome.result);
  }
  if (env.signal.aborted) return null;
  return results;
}

/**
 * Settles the tool uses of one reply (or the open ones of a resumed turn), batch by batch
 * ({@link toolBatches}, {@link settleBatch}); `preset` holds results already known by tool_use id.
 * The batches share the user message's aggregate result budget (`resultBudgets.maxMessageChars`).
 * Returns every result in request order, or null once the signal fires (checked before each batch
 * too). Throws only what `env.afterTool` throws.
 */
export async function* settleToolUses(
  uses: readonly ToolUseBlock[],
  env: ToolEnvironment,
  preset?: ReadonlyMap<string, ToolResultBlock>,
): AsyncGenerator<ToolBatchEvent, ToolResultBlock[] | null, void> {
  const results: ToolResultBlock[] = [];
  let remaining = (env.resultBudgets ?? DEFAULT_RESULT_BUDGETS).maxMessageChars;
  for (const batch of toolBatches(uses, env.tools)) {
    if (env.signal.aborted) return null;
    const settled = yield* settleBatch(batch, env, preset, remaining);
    if (!settled) return null;
    results.push(...settled);
    remaining -= settled.reduce((sum, r) => sum + r.content.length, 0);
  }
  return results;
}
