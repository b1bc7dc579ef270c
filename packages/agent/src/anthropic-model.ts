import Anthropic from '@anthropic-ai/sdk';
import { countTokensRequest, DEFAULT_COUNT_TOKENS_TIMEOUT_MS } from './anthropic-count.js';
import { buildMessagesRequest } from './anthropic-request.js';
import { ModelError } from './errors.js';
import type { AssistantBlock } from './messages.js';
import type { ModelClient, ModelRequest, ModelResponse, ModelStreamEvent } from './model.js';

export interface AnthropicModelOptions {
  apiKey: string;
  /** Without `/v1`; the SDK appends `/v1/messages`. */
  baseUrl?: string;
  /** Time to response headers before the request counts as failed. */
  requestTimeoutMs: number;
  /** A stream that goes silent this long after its headers is aborted as stalled. */
  streamIdleTimeoutMs: number;
  /** How long a `countTokens` call may take (default 5 s): it is only a refinement of an estimate. */
  countTokensTimeoutMs?: number;
}

/** Parses `retry-after-ms` / `retry-after` (seconds or an HTTP date) into milliseconds. */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  if (Number.isFinite(Number(ra))) return Math.max(0, Number(ra) * 1000);
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

const PROMPT_TOO_LONG = /prompt is too long/i;
const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** Where a client sends its requests, for error messages: the URL (no credentials or query) and a base-URL hint. */
export interface ModelEndpoint {
  url: string;
  /** Set when the base URL ends with `/v1` (requests then go to `/v1/v1/messages`). */
  hint: string;
}

/** The messages URL a base URL leads to, without userinfo or query, and a hint when the base ends with `/v1`. */
export function modelEndpoint(baseUrl: string | undefined): ModelEndpoint {
  const base = (baseUrl || DEFAULT_BASE_URL).replace(/\/+$/, '');
  let url = `${base}/v1/messages`;
  let path = '';
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    url = u.toString();
    path = new URL(base).pathname;
  } catch {
    // not a URL (the config validates it): named as it is
  }
  const hint = /\/v1$/i.test(path.replace(/\/+$/, ''))
    ? ' The base URL ends with /v1, but the client adds /v1/messages itself: remove the /v1 suffix from model.baseUrl (or ANTHROPIC_BASE_URL).'
    : '';
  return { url, hint };
}

/** Maps an SDK error to a ModelError whose message carries no upstream body or secret. */
function classify(err: unknown, streamedText: boolean, at: ModelEndpoint): ModelError {
  if (err instanceof ModelError) return err;
  if (err instanceof Anthropic.APIUserAbortError) {
    return new ModelError('aborted', 'The model call was aborted.', { streamedText });
  }
  if (err instanceof Anthropic.APIConnectionTimeoutError) {
    return new ModelError('stalled', 'The model API did not answer in time.', { streamedText, cause: err });
  }
  if (err instanceof Anthropic.APIConnectionError) {
    return new ModelError('connection', `Could not reach the model API at ${at.url}.${at.hint}`, { streamedText, cause: err });
  }
  if (err instanceof Anthropic.APIError) {
    const status = err.status;
    const body = err.error as { error?: { type?: string; message?: string; details?: { error_code?: string } } } | undefined;
    const type = body?.error?.type ?? (err as { type?: string }).type;
    const upstreamMessage = body?.error?.message ?? '';
    const retryAfter = retryAfterMs(err.headers as Headers | undefined);
    const base = { status, streamedText, cause: err, ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}) };
    if (status === undefined) {
      // A mid-stream `event: error`: the SDK throws without a status.
      if (type === 'overloaded_error') return new ModelError('overloaded', 'The model API is overloaded.', base);
      if (type === 'rate_limit_error') return new ModelError('rate_limit', 'The model API rate limit was hit.', base);
      return new ModelError('server', `The model stream failed (${type ?? 'unknown error'}).`, base);
    }
    if (status === 429) {
      if (body?.error?.details?.error_code === 'enforced_spend_limit_reached') {
        return new ModelError('spend_limit', 'The model API spend limit has been reached.', base);
      }
      return new ModelError('rate_limit', 'The model API rate limit was hit.', base);
    }
    if (status === 529 || type === 'overloaded_error') return new ModelError('overloaded', 'The model API is overloaded.', base);
    if (status >= 500 || status === 408 || status === 409) {
      return new ModelError('server', `The model API failed with HTTP ${status}.`, base);
    }
    if (status === 401 || status === 403) {
      return new ModelError('auth', `The model API at ${at.url} refused the credentials (HTTP ${status}).${at.hint}`, base);
    }
    if (status === 400 && PROMPT_TOO_LONG.test(upstreamMessage)) {
      return new ModelError('prompt_too_long', 'The conversation is too long for the model.', base);
    }
    const where = status === 404 ? ` at ${at.url}` : '';
    return new ModelError('invalid_request', `The model API rejected the request (HTTP ${status})${where}.${at.hint}`, base);
  }
  return new ModelError('connection', 'The model call failed unexpectedly.', { streamedText, cause: err });
}

interface PendingBlock {
  kind: 'text' | 'tool_use';
  text: string;
  id: string;
  name: string;
  json: string;
}

/** A ModelClient over the Anthropic Messages API (streaming), with the SDK's own retries off. */
export class AnthropicModelClient implements ModelClient {
  private readonly client: Anthropic;
  private readonly idleMs: number;
  private readonly endpoint: ModelEndpoint;
  private readonly countTimeoutMs: number;

  constructor(opts: AnthropicModelOptions) {
    this.client = new Anthropic({
      apiKey: opts.apiKey,
      ...(opts.baseUrl ? { baseURL: opts.baseUrl } : {}),
      maxRetries: 0,
      timeout: opts.requestTimeoutMs,
    });
    this.idleMs = opts.streamIdleTimeoutMs;
    this.endpoint = modelEndpoint(opts.baseUrl);
    this.countTimeoutMs = opts.countTokensTimeoutMs ?? DEFAULT_COUNT_TOKENS_TIMEOUT_MS;
  }

  /** `POST /v1/messages/count_tokens` for the request {@link stream} would send (see {@link countTokensRequest}). */
  async countTokens(req: ModelRequest, signal: AbortSignal): Promise<number> {
    if (signal.aborted) throw new ModelError('aborted', 'The model call was aborted.');
    try {
      const counted = await this.client.messages.countTokens(countTokensRequest(req), { signal, timeout: this.countTimeoutMs });
      const tokens: unknown = counted?.input_tokens;
      if (typeof tokens !== 'number' || !Number.isInteger(tokens) || tokens < 0) {
        throw new ModelError('server', 'The model API answered a token count without a valid input_tokens.');
      }
      return tokens;
    } catch (err) {
      if (signal.aborted) throw new ModelError('aborted', 'The model call was aborted.');
      throw classify(err, false, this.endpoint);
    }
  }

  async *stream(req: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelStreamEvent, ModelResponse, void> {
    const local = new AbortController();
    let stalled = false;
    const onAbort = () => local.abort(signal.reason);
    if (signal.aborted) throw new ModelError('aborted', 'The model call was aborted.');
    signal.addEventListener('abort', onAbort, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      if (idle) clearTimeout(idle);
      idle = setTimeout(() => {
        stalled = true;
        local.abort(new Error('stream idle'));
      }, this.idleMs);
    };
    let streamedText = false;
    try {
      arm();
      const stream = await this.client.messages.create(buildMessagesRequest(req), { signal: local.signal });
      arm();
      const blocks = new Map<number, PendingBlock>();
      let stopReason: string | null = null;
      let sawStop = false;
      let model = req.model;
      const usage = { inputTokens: 0, outputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 };
      for await (const ev of stream) {
        arm();
        switch (ev.type) {
          case 'message_start':
            model = ev.message.model ?? model;
            usage.inputTokens = ev.message.usage?.input_tokens ?? 0;
            usage.outputTokens = ev.message.usage?.output_tokens ?? 0;
            usage.cacheCreationInputTokens = ev.message.usage?.cache_creation_input_tokens ?? 0;
            usage.cacheReadInputTokens = ev.message.usage?.cache_read_input_tokens ?? 0;
            break;
          case 'content_block_start': {
            const cb = ev.content_block;
            if (cb.type === 'text') {
              blocks.set(ev.index, { kind: 'text', text: cb.text ?? '', id: '', name: '', json: '' });
              if (cb.text) {
                streamedText = true;
                yield { type: 'text_delta', text: cb.text };
              }
            } else if (cb.type === 'tool_use') {
              blocks.set(ev.index, { kind: 'tool_use', text: '', id: cb.id, name: cb.name, json: '' });
            }
            break;
          }
          case 'content_block_delta': {
            const b = blocks.get(ev.index);
            if (!b) break;
            if (ev.delta.type === 'text_delta' && b.kind === 'text') {
              b.text += ev.delta.text;
              streamedText = true;
              yield { type: 'text_delta', text: ev.delta.text };
            } else if (ev.delta.type === 'input_json_delta' && b.kind === 'tool_use') {
              b.json += ev.delta.partial_json;
            }
            break;
          }
          case 'message_delta':
            stopReason = ev.delta.stop_reason ?? stopReason;
            // Cumulative counters; the cache ones may be absent or null (then message_start's stand).
            if (ev.usage?.output_tokens !== undefined && ev.usage.output_tokens !== null) {
              usage.outputTokens = ev.usage.output_tokens;
            }
            if (typeof ev.usage?.input_tokens === 'number') usage.inputTokens = ev.usage.input_tokens;
            if (typeof ev.usage?.cache_creation_input_tokens === 'number') usage.cacheCreationInputTokens = ev.usage.cache_creation_input_tokens;
            if (typeof ev.usage?.cache_read_input_tokens === 'number') usage.cacheReadInputTokens = ev.usage.cache_read_input_tokens;
            break;
          case 'message_stop':
            sawStop = true;
            break;
          default:
            break;
        }
      }
      if (!sawStop || stopReason === null) {
        throw new ModelError('truncated', 'The model stream ended before the message was complete.', { streamedText });
      }
      const content: AssistantBlock[] = [];
      const indices = [...blocks.keys()].sort((a, b) => a - b);
      let cutToolUseId: string | undefined;
      for (const index of indices) {
        const b = blocks.get(index)!;
        if (b.kind === 'text') {
          if (b.text.length > 0) content.push({ type: 'text', text: b.text });
        } else {
          let input: unknown = {};
          if (b.json.trim() !== '') {
            try {
              input = JSON.parse(b.json);
            } catch (err) {
              // The output limit cut the last block's input: returned (input {}) for the loop to recover.
              if (stopReason === 'max_tokens' && index === indices.at(-1)) cutToolUseId = b.id;
              else throw new ModelError('truncated', 'The model sent tool input that is not valid JSON.', { streamedText, cause: err });
            }
          }
          content.push({ type: 'tool_use', id: b.id, name: b.name, input });
        }
      }
      return { message: { role: 'assistant', content }, stopReason, usage, model, ...(cutToolUseId !== undefined ? { cutToolUseId } : {}) };
    } catch (err) {
      if (stalled && !signal.aborted) {
        throw new ModelError('stalled', 'The model stream stalled and was aborted.', { streamedText, cause: err });
      }
      if (signal.aborted) throw new ModelError('aborted', 'The model call was aborted.', { streamedText });
      throw classify(err, streamedText, this.endpoint);
    } finally {
      if (idle) clearTimeout(idle);
      signal.removeEventListener('abort', onAbort);
    }
  }
}

/** The model client used when no API key is configured: every call fails with a clear message. */
export class UnconfiguredModelClient implements ModelClient {
  // biome-ignore lint/correctness/useYield: the contract is a generator; this one fails on its first next(), as a real call would
  async *stream(): AsyncGenerator<ModelStreamEvent, ModelResponse, void> {
    throw new ModelError('no_model', 'No model is configured: set ANTHROPIC_API_KEY (or model.apiKey in the config) and restart the gateway.');
  }
}
