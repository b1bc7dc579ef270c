import type { AssistantMessage, ToolResultBlock, Usage, UserMessage } from './messages.js';
import type { AskSource } from './tool.js';

/**
 * Why the loop itself ended a turn:
 * - `completed`: the model answered without tool uses (with an `error` when the answer was cut off
 *   by the output limit after every allowed continuation);
 * - `max_turns`: the turn made `maxTurns` model calls and wanted another;
 * - `aborted`: the turn's signal fired (a stop, a shutdown, a timeout of the whole turn);
 * - `model_error`: the model call failed for good (not retryable, or every retry and the
 *   fallback spent);
 * - `prompt_too_long`: the conversation no longer fits the model's context.
 */
export type LoopEndReason = 'completed' | 'max_turns' | 'aborted' | 'model_error' | 'prompt_too_long';

/**
 * Why a `shouldStop` or `beforeCall` hook ended a turn: `denial_limit` (too many tool uses denied
 * in a row or in the session), `hook_stopped` (a hook refused to let the turn go on) or
 * `budget_exceeded` (a token or cost budget is spent).
 */
export type StopHookReason = 'denial_limit' | 'hook_stopped' | 'budget_exceeded';

/** Every reason `query()` can end a turn with: the ones it decides itself and the ones `shouldStop` hands it. */
export type TerminalReason = LoopEndReason | StopHookReason;

/** What the query loop yields while it runs. Persisted kinds are marked. */
export type AgentEvent =
  | { type: 'text_delta'; text: string }
  /** Text streamed so far in this attempt is void: renderers discard their draft. */
  | { type: 'attempt_reset'; reason: string }
  /** A complete assistant message (persisted). */
  | { type: 'assistant_message'; message: AssistantMessage; model: string }
  /** A user message injected into the running turn (steer; persisted). */
  | { type: 'user_message'; message: UserMessage }
  /** A tool call is about to run (persisted: a restart treats it as started). */
  | { type: 'tool_start'; toolUseId: string; name: string; input: unknown; readOnly: boolean }
  /** A running tool's progress report (not persisted; see `ToolContext.progress`). */
  | { type: 'tool_progress'; toolUseId: string; name: string; message: string; lines?: number; elapsedMs?: number }
  /**
   * A tool call's result (persisted). `result` is what the model sees; `fullContent` is the
   * whole result, set when the tool-result budget cut it (see `budgetResults`).
   */
  | { type: 'tool_end'; toolUseId: string; name: string; result: ToolResultBlock; fullContent?: string }
  /**
   * A tool call waits for a decision; `source` says which step asked (see {@link AskSource}).
   * `choices`: the options an approval offers besides deny (a plan approval: the modes the person
   * may switch to, least trusted first); such an approval offers no "always allow".
   */
  | {
      type: 'approval_requested';
      approvalId: string;
      toolUseId: string;
      name: string;
      summary: string;
      expiresAt: string;
      source?: AskSource;
      choices?: readonly string[];
    }
  | { type: 'approval_resolved'; approvalId: string; toolUseId: string; allowed: boolean; by: string }
  | { type: 'usage'; usage: Usage; model: string }
  /** A retry or fallback the loop made (for logs and usage records). */
  | { type: 'model_retry'; attempt: number; delayMs: number; error: string; model: string; fallback: boolean }
  /** The last event of every turn the loop ends itself; carries the same reason and error it returns. */
  | { type: 'terminal'; reason: TerminalReason; error?: string };

/** What `query()` returns: why the turn ended. */
export interface QueryResult {
  reason: TerminalReason;
  /** A message safe to show a person: set for every reason but `completed`, and for a `completed` answer cut off by the output limit. */
  error?: string;
}
