import type { AgentEvent } from './events.js';
import type { Message, ToolResultBlock, ToolUseBlock } from './messages.js';
import { callModelWithRetries, type ModelCallEvent, type ModelCallSettings, type ModelRoute } from './model-call.js';
import type { ModelResponse } from './model.js';
import { type ToolBatchEvent, settleToolUses } from './tool-batch.js';
import { type ToolEnvironment, toolErrorResult } from './tool-prepare.js';

/** The events a model call with output-token recovery yields: those of a model call, and `usage` of a cut reply it retried. */
export type OutputRecoveryEvent = ModelCallEvent | Extract<AgentEvent, { type: 'usage' }>;

/**
 * The output cap a reply cut inside a tool_use is retried with: `maxOutputTokens` when it is
 * above `maxTokens`, else null (no raise: the cut call is answered at once).
 */
export function raisedOutputCap(maxTokens: number, maxOutputTokens: number | undefined): number | null {
  return maxOutputTokens !== undefined && maxOutputTokens > maxTokens ? maxOutputTokens : null;
}

/** The output cap the last attempt of a call ran with: the raised one when there is one, else `maxTokens`. */
export function finalOutputCap(maxTokens: number, maxOutputTokens: number | undefined): number {
  return raisedOutputCap(maxTokens, maxOutputTokens) ?? maxTokens;
}

/** What the model is told about a tool call whose input the output limit cut off. */
export function cutToolInputText(toolName: string, outputCap: number): string {
  return (
    `The input of this ${toolName} call was cut off: your reply reached the output limit (${outputCap} tokens) before the call was complete, ` +
    'so it was not run. Write in smaller parts instead: e.g. several smaller write_file/edit_file calls ' +
    '(create the file with the first part, then add each further part with its own call), each well under the limit.'
  );
}

/** The is_error tool_result for a tool call whose input was cut off at `outputCap` tokens. */
export function cutToolInputResult(use: ToolUseBlock, outputCap: number): ToolResultBlock {
  return toolErrorResult(use.id, cutToolInputText(use.name, outputCap));
}

/**
 * One model call ({@link callModelWithRetries}) with output-token recovery: when the reply is cut
 * by `max_tokens` inside its last tool_use (`cutToolUseId`) and {@link raisedOutputCap} gives a
 * higher cap, the call is made once more with that cap — after yielding the cut reply's `usage`,
 * an `attempt_reset` when it had text, and a `model_retry` (attempt 1, no delay). Returns the
 * last reply, which may still be cut (it is never retried a second time): the caller answers
 * that tool use with {@link cutToolInputResult}. Throws what the model call throws.
 */
export async function* callModelWithOutputRecovery(
  messages: Message[],
  route: ModelRoute,
  settings: ModelCallSettings,
  maxOutputTokens: number | undefined,
): AsyncGenerator<OutputRecoveryEvent, ModelResponse, void> {
  const first = yield* callModelWithRetries(messages, route, settings);
  const raised = first.cutToolUseId !== undefined ? raisedOutputCap(settings.maxTokens, maxOutputTokens) : null;
  if (raised === null) return first;
  yield { type: 'usage', usage: first.usage, model: first.model };
  const reason = `The reply was cut at the output limit (${settings.maxTokens} tokens) inside a tool call; retrying with ${raised}.`;
  if (first.message.content.some((block) => block.type === 'text' && block.text.length > 0)) yield { type: 'attempt_reset', reason };
  yield { type: 'model_retry', attempt: 1, delayMs: 0, error: reason, model: route.current, fallback: false };
  return yield* callModelWithRetries(messages, route, { ...settings, maxTokens: raised });
}

/**
 * Settles a reply's tool uses ({@link settleToolUses}); the one whose input was cut (`cutId`,
 * the reply's last block) does not run: it gets {@link cutToolInputResult} and a `tool_end`
 * event after the others. Returns the results in request order, or null once the signal fired.
 */
export async function* settleReplyToolUses(
  uses: readonly ToolUseBlock[],
  cutId: string | undefined,
  env: ToolEnvironment,
  outputCap: number,
): AsyncGenerator<ToolBatchEvent, ToolResultBlock[] | null, void> {
  const cut = cutId === undefined ? undefined : uses.find((use) => use.id === cutId);
  const results = yield* settleToolUses(cut ? uses.filter((use) => use !== cut) : uses, env);
  if (!results || !cut) return results;
  const result = cutToolInputResult(cut, outputCap);
  yield { type: 'tool_end', toolUseId: cut.id, name: cut.name, result };
  return [...results, result];
}
