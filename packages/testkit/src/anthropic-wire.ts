/** Wire shapes of the Anthropic Messages API as the fake emits them (JSON and SSE). */

/** A `stop_reason` the API can return. */
export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

/**
 * The usage object: the four counters, and the split of the cache writes by TTL.
 * `input_tokens` counts only the tokens after the last cache breakpoint; the request's whole
 * input is `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`.
 */
export interface WireUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** A response content block. */
export type WireBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** A complete `Message` (the non-streaming body, and what a stream accumulates to). */
export interface WireMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: WireBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: WireUsage;
}

/** One SSE event: `event: <event>\ndata: <JSON of data>\n\n`; `data.type === event`. */
export interface SseEvent {
  event: string;
  data: Record<string, unknown> & { type: string };
}

/** Text deltas per text block (fewer when the text is shorter). */
export const TEXT_CHUNKS = 3;
/** `input_json_delta` pieces per tool_use block after the leading empty one (fewer when shorter). */
export const JSON_CHUNKS = 2;

/** Splits `s` into at most `n` pieces of near-equal length, never splitting a code point. */
export function splitChunks(s: string, n: number): string[] {
  const chars = Array.from(s);
  if (chars.length === 0) return [];
  const pieces = Math.min(n, chars.length);
  const size = Math.ceil(chars.length / pieces);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** A rough, deterministic token estimate (4 characters per token, at least 1). */
export function estimateTokens(value: unknown): number {
  const s = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  return Math.max(1, Math.ceil(s.length / 4));
}

/**
 * The SSE events for `message`, in the order the real API writes them:
 * `message_start` (content [], stop_reason null) · per block `content_block_start`, deltas,
 * `content_block_stop` · `ping` right after the first `content_block_start` (after
 * `message_start` when there are no blocks) · `message_delta` (stop_reason, the cumulative
 * usage counters) · `message_stop`.
 *
 * A text block yields `min(TEXT_CHUNKS, length)` `text_delta`s; a tool_use block yields one
 * empty `input_json_delta` and then `min(JSON_CHUNKS, length)` pieces of its JSON input.
 * Example, `{ text: 'Hello world' }`: 1 message_start, 2 content_block_start, 3 ping,
 * 4–6 text_delta (`Hell`, `o wo`, `rld`), 7 content_block_stop, 8 message_delta, 9 message_stop.
 * `partialJson` (block index → text) replaces a tool_use's input JSON: a reply cut at max_tokens.
 */
export function buildStreamEvents(message: WireMessage, partialJson?: ReadonlyMap<number, string>): SseEvent[] {
  const events: SseEvent[] = [];
  const startUsage = { ...message.usage, output_tokens: Math.min(1, message.usage.output_tokens) };
  events.push({
    event: 'message_start',
    data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: startUsage } },
  });
  const ping: SseEvent = { event: 'ping', data: { type: 'ping' } };
  if (message.content.length === 0) events.push(ping);
  message.content.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : { type: 'tool_use', id: block.id, name: block.name, input: {} };
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } });
    if (index === 0) events.push(ping);
    const deltas =
      block.type === 'text'
        ? splitChunks(block.text, TEXT_CHUNKS).map((text) => ({ type: 'text_delta', text }))
        : ['', ...splitChunks(partialJson?.get(index) ?? JSON.stringify(block.input), JSON_CHUNKS)].map((partial_json) => ({
            type: 'input_json_delta',
            partial_json,
          }));
    for (const delta of deltas) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta } });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
      usage: {
        input_tokens: message.usage.input_tokens,
        cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
        cache_read_input_tokens: message.usage.cache_read_input_tokens,
        output_tokens: message.usage.output_tokens,
      },
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** Serialises one event in the SSE wire format. */
export function encodeSse(ev: SseEvent): string {
  return `event: ${ev.event}\ndata: ${JSON.stringify(ev.data)}\n\n`;
}

/** The API error body: `{"type":"error","error":{type,message,…details},"request_id":…}`. */
export function errorBody(type: string, message: string, requestId: string, details?: object): Record<string, unknown> {
  return { type: 'error', error: { type, message, ...(details ? { details } : {}) }, request_id: requestId };
}

const STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/** The HTTP status the API uses for an error type (500 for unknown types). */
export function statusForErrorType(type: string): number {
  return STATUS_BY_TYPE[type] ?? 500;
}

const DEFAULT_MESSAGES: Readonly<Record<string, string>> = {
  overloaded_error: 'Overloaded',
  api_error: 'Internal server error',
  rate_limit_error: 'Number of request tokens has exceeded your per-minute rate limit',
};

/** A plausible default message for an error type. */
export function defaultErrorMessage(type: string): string {
  return DEFAULT_MESSAGES[type] ?? type.replace(/_/g, ' ');
}
