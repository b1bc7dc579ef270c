/**
 * Request validation for the fake's `POST /v1/messages/count_tokens`: the body fields the API
 * accepts there (unknown ones, `max_tokens` and `stream` included, are refused as the API refuses
 * them), then the same checks as a Messages body (roles, pairing, tools, `cache_control`).
 */
import { type ValidationFailure, validateMessagesRequest } from './anthropic-validate.js';

/** The body fields count_tokens accepts (the Messages fields that shape the prompt). */
export const COUNT_TOKENS_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'cache_control',
  'mcp_servers',
  'context_management',
]);

/** Validates a parsed count_tokens body; returns the first failure or undefined. */
export function validateCountTokensRequest(body: unknown): ValidationFailure | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { message: 'Input should be a valid dictionary' };
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!COUNT_TOKENS_FIELDS.has(key)) return { message: `${key}: Extra inputs are not permitted` };
  }
  if (typeof fields.model !== 'string' || fields.model === '') return { message: 'model: Field required' };
  if (fields.messages === undefined) return { message: 'messages: Field required' };
  // The Messages checks need a max_tokens; count_tokens has none of its own.
  return validateMessagesRequest({ ...fields, max_tokens: 1 });
}
