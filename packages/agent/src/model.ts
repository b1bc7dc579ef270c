import type { AssistantMessage, Message, SystemBlock, Usage } from './messages.js';

/** A tool as the model sees it. */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  system: SystemBlock[];
  messages: Message[];
  tools: ToolSpec[];
  maxTokens: number;
}

export type ModelStreamEvent = { type: 'text_delta'; text: string };

export interface ModelResponse {
  message: AssistantMessage;
  /** `end_turn`, `tool_use`, `max_tokens`, … — never null (a null stop reason is a truncation). */
  stopReason: string;
  usage: Usage;
  model: string;
  /**
   * Set when the reply stopped at `max_tokens` inside its last block, a tool_use whose input was
   * cut (not valid JSON): that block's id. The block is in `message` with `input: {}`.
   */
  cutToolUseId?: string;
}

/**
 * One streamed model call. Contract: yields text deltas as they arrive and returns the complete
 * message (a tool_use cut by `max_tokens` is returned, marked by `cutToolUseId`); every failure is thrown as a `ModelError` (classified, with a message safe to show);
 * aborting `signal` stops the stream and throws `ModelError('aborted')`.
 */
export interface ModelClient {
  stream(req: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelStreamEvent, ModelResponse, void>;
  /**
   * Optional: the input tokens the API counts for `req` (system prompt, tools and messages; the
   * request is not sent to the model, nothing is billed). Contract: resolves with a non-negative
   * integer; every failure (a timeout included) is thrown as a `ModelError`, classified like a
   * call's; aborting `signal` throws `ModelError('aborted')`. A client without it has no exact count.
   */
  countTokens?(req: ModelRequest, signal: AbortSignal): Promise<number>;
}
