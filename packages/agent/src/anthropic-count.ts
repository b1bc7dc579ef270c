import type Anthropic from '@anthropic-ai/sdk';
import { buildMessagesRequest } from './anthropic-request.js';
import type { ModelRequest } from './model.js';

/** The `POST /v1/messages/count_tokens` body the client sends. */
export type CountTokensRequestBody = Anthropic.MessageCountTokensParams;

/** Default time a token count may take before the caller falls back to its estimate. */
export const DEFAULT_COUNT_TOKENS_TIMEOUT_MS = 5_000;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A block without `cache_control` (nor the blocks of a tool_result's content): counting caches nothing. */
function uncached<T>(block: T): T {
  if (!isRecord(block)) return block;
  const { cache_control: _breakpoint, ...rest }: Record<string, unknown> = block;
  if (Array.isArray(rest.content)) rest.content = rest.content.map(uncached);
  return rest as T;
}

/**
 * The count_tokens body for the request `req` streams: the same model, system prompt, tools (in
 * the same order) and messages as {@link buildMessagesRequest} sends — so the count is the
 * tokens of that very request — minus what count_tokens does not take (`stream`, `max_tokens`)
 * and the `cache_control` breakpoints (counting caches nothing; a breakpoint adds no tokens).
 */
export function countTokensRequest(req: ModelRequest): CountTokensRequestBody {
  const { stream: _stream, max_tokens: _maxTokens, system, tools, messages, model } = buildMessagesRequest(req);
  const body: CountTokensRequestBody = {
    model,
    messages: messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map(uncached) })),
  };
  if (system !== undefined) body.system = typeof system === 'string' ? system : system.map(uncached);
  if (tools !== undefined) body.tools = tools.map(uncached) as Anthropic.MessageCountTokensTool[];
  return body;
}
