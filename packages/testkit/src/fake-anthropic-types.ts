import type { StopReason, WireUsage } from './anthropic-wire.js';

/** A content block of a recorded request message (loosely typed for assertions). */
// biome-ignore lint/suspicious/noExplicitAny: loosely typed on purpose: tests read nested fields of recorded JSON without casts
export type RecordedBlock = { type: string } & Record<string, any>;

/** A message of a recorded request. */
export interface RecordedMessage {
  role: 'user' | 'assistant' | string;
  content: string | RecordedBlock[];
}

/** The parsed body of a recorded request (loosely typed; nothing is guaranteed for a bad request). */
export interface RecordedBody {
  model?: string;
  max_tokens?: number;
  system?: string | RecordedBlock[];
  messages?: RecordedMessage[];
  // biome-ignore lint/suspicious/noExplicitAny: loosely typed on purpose: tests read nested fields of recorded JSON without casts
  tools?: Array<{ name: string } & Record<string, any>>;
  stream?: boolean;
  [key: string]: unknown;
}

/** One request the fake received, in arrival order. */
export interface RecordedRequest {
  /** The `request-id` the fake answered with: `req_test_N` (N counts from 1 per fake). */
  id: string;
  /** 1-based arrival index. */
  seq: number;
  receivedAt: Date;
  method: string;
  path: string;
  /** Request headers, lower-cased, without `x-api-key` and `authorization`. */
  headers: Record<string, string>;
  /** The parsed JSON body (an empty object when the body was not JSON; see `rawBody`). */
  body: RecordedBody;
  rawBody: string;
  /** Whether the key (x-api-key or Bearer) was accepted: equal to `apiKey`, or non-empty by default. */
  apiKeyMatched: boolean;
  /** The usage the fake answered a `/v1/messages` request with (set once the answer is built; absent for errors). */
  usage?: WireUsage;
  /** The `input_tokens` the fake answered a `/v1/messages/count_tokens` request with (absent for errors). */
  countedTokens?: number;
}

/** A tool call the scripted model makes. `id` defaults to `toolu_test_N`. */
export interface ScriptedToolUse {
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

/** An HTTP error answer, with the API's error body shape. */
export interface ScriptedHttpError {
  status: number;
  /** `error.type`, e.g. `rate_limit_error`, `overloaded_error`, `api_error`, `invalid_request_error`. */
  type: string;
  message: string;
  /** Extra response headers, e.g. `retry-after`, `retry-after-ms`, `x-should-retry`. */
  headers?: Record<string, string>;
  /** Merged into `error.details`, e.g. `{ error_code: 'enforced_spend_limit_reached' }`. */
  details?: object;
}

/**
 * One scripted answer. Content is `text` and/or `toolUses` (a tool_use answer ends with
 * stop_reason `tool_use`, text before the tool_use blocks); when neither is given, the content
 * comes from the default handler. At most one fault (`error`, `streamError`, `stallAfterEvents`,
 * `endAfterEvents`, `holdAfterEvents`, `destroyAfterEvents`) applies, in that order of precedence.
 *
 * Event counting (streaming): events are numbered in the order they are written, starting at
 * `message_start` = 1, `ping` included (see `buildStreamEvents`). "after n events" means
 * exactly the first n events are written, then the fault happens. Response headers (200,
 * `text/event-stream`) are always sent before event 1, so n = 0 means "headers, then the fault".
 *
 * Non-streaming requests: `streamError` becomes the HTTP error of that type (529 for
 * `overloaded_error`); `stallAfterEvents` sends the 200 headers and then nothing; `endAfterEvents`
 * sends the headers and the first half of the JSON body, then ends; `holdAfterEvents` holds
 * before responding; `destroyAfterEvents` sends the headers and destroys the socket.
 */
export interface ScriptedResponse {
  text?: string;
  toolUses?: ScriptedToolUse[];
  /** Default `end_turn` for text, `tool_use` with toolUses. */
  stopReason?: StopReason;
  /** Overrides the estimated usage counters. */
  usage?: Partial<WireUsage>;
  /** Extra headers on a successful response. */
  headers?: Record<string, string>;
  /** Answer with this HTTP error instead of a message. */
  error?: ScriptedHttpError;
  /** Write `afterEvents` events, then `event: error` with this error type, then end the body. */
  streamError?: { afterEvents: number; type: string; message?: string };
  /** Write n events, then keep the connection open and silent until the client goes away or the fake closes. */
  stallAfterEvents?: number;
  /** Write n events, then end the body cleanly (no `message_stop`). */
  endAfterEvents?: number;
  /** Write n events, then wait for `fake.release()`, then write the rest. */
  holdAfterEvents?: number;
  /** Write n events, then destroy the socket (a connection reset mid-body). */
  destroyAfterEvents?: number;
  /** Before anything is written (no headers), wait for `fake.release()`. */
  hold?: boolean;
  /**
   * Enforce the request's `max_tokens` like the API: when the content is longer than
   * `max_tokens × 4` characters (text, and each tool_use's input JSON, counted in order), it is
   * cut there — a text block is shortened, a tool_use's input is streamed as a partial
   * `input_json_delta` (not valid JSON; the non-streaming body gets `input: {}`), later blocks
   * are dropped — and the reply ends with stop_reason `max_tokens` and `output_tokens` =
   * `max_tokens`. Content that fits is sent unchanged.
   */
  cutAtMaxTokens?: boolean;
}

/**
 * One scripted `count_tokens` answer: an HTTP `error`, a `stall` (nothing is written until the
 * client goes away or the fake closes: a timeout), or a count (`inputTokens`; default the
 * fake's own count, `requestTokens` of the body, which equals the input counters of the usage a
 * Messages request with the same prompt is answered with).
 */
export interface ScriptedCount {
  inputTokens?: number;
  error?: ScriptedHttpError;
  stall?: boolean;
}

/** Picks a count_tokens answer for a (valid) request; `undefined` means the fake's own count. */
export type CountTokensHandler = (req: RecordedRequest) => ScriptedCount | undefined;

/** Picks a response for a request; `undefined` means "no opinion" (fall through). */
export type ResponseHandler = (req: RecordedRequest) => ScriptedResponse | undefined;

/** Options for `startFakeAnthropic`. */
export interface FakeAnthropicOptions {
  /** The accepted API key; default: any non-empty `x-api-key` (or Bearer token). */
  apiKey?: string;
  /** A key whose arrival is written to the canary marker (default `CANARY_ANTHROPIC_KEY`). */
  canaryKey?: string;
  /** The canary marker file (default `canarySeenPath()`). */
  canarySeenPath?: string;
  /** Source tag for run-log lines (default `fake-anthropic:<port>`). */
  logSource?: string;
  /**
   * The minimum cacheable prefix in tokens, by model name; models not listed get
   * `defaultMinCacheTokens` (4,096 for Haiku 4.5 / Opus 4.5, else 1,024). A breakpoint with a
   * shorter prefix silently caches nothing, as the API does.
   */
  minCacheTokens?: Readonly<Record<string, number>>;
  /**
   * The model's context window in tokens: a `/v1/messages` request whose estimated input tokens
   * plus `max_tokens` exceed it is refused like the API does (400 `invalid_request_error`,
   * "prompt is too long: N tokens > M maximum"), before any handler or queued response. Default: no limit.
   */
  contextWindow?: number;
  /** The prompt cache's clock in milliseconds (default `Date.now`): tests move it to expire entries. */
  now?: () => number;
}
