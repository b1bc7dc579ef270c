import type { AssistantMessage, ToolResultBlock, Usage, UserMessage } from './messages.js';
import type { AskSource } from './tool.js';

export type TerminalReason = 'completed' | 'max_turns' | 'aborted' | 'interrupted' | 'model_error' | 'prompt_too_long' | 'hook_stopped' | 'denial_limit';

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
  /**
   * A tool call's result (persisted). `result` is what the model sees; `fullContent` is set
   * when the content was cut to the tool's maxResultChars.
   */
  | { type: 'tool_end'; toolUseId: string; name: string; result: ToolResultBlock; fullContent?: string }
  /** A tool call waits for a decision; `source` says which step asked (see {@link AskSource}). */
  | { type: 'approval_requested'; approvalId: string; toolUseId: string; name: string; summary: string; expiresAt: string; source?: AskSource }
  | { type: 'approval_resolved'; approvalId: string; toolUseId: string; allowed: boolean; by: string }
  | { type: 'usage'; usage: Usage; model: string }
  /** A retry or fallback the loop made (for logs and usage records). */
  | { type: 'model_retry'; attempt: number; delayMs: number; error: string; model: string; fallback: boolean }
  | { type: 'terminal'; reason: TerminalReason; error?: string };

export interface QueryResult {
  reason: TerminalReason;
  /** A message safe to show a person, for every reason but `completed`. */
  error?: string;
}
