import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { buildStreamEvents, defaultErrorMessage, encodeSse, errorBody, statusForErrorType, type WireMessage } from './anthropic-wire.js';
import { validateMessagesRequest } from './anthropic-validate.js';
import { validateCountTokensRequest } from './anthropic-validate-count.js';
import { CANARY_ANTHROPIC_KEY } from './canaries.js';
import type {
  CountTokensHandler,
  FakeAnthropicOptions,
  RecordedBody,
  RecordedRequest,
  ResponseHandler,
  ScriptedCount,
  ScriptedResponse,
} from './fake-anthropic-types.js';
import { appendLine, appendRunLog, canarySeenPath } from './run-log.js';
import { buildScriptedMessage, echoResponse } from './scripted-message.js';
import { listenLoopback } from './loopback.js';
import { cutAtMaxTokens } from './max-tokens-cut.js';
import { type CacheAccount, defaultMinCacheTokens, PromptCache, requestTokens } from './fake-prompt-cache.js';
import { contextWindowRefusal } from './fake-anthropic-summary.js';

/** A loopback fake of the Anthropic Messages API; point the SDK's `baseURL` at `url`. */
export interface FakeAnthropic {
  /** `http://127.0.0.1:PORT` (no trailing `/v1`; the SDK appends `/v1/messages`). */
  readonly url: string;
  readonly port: number;
  /**
   * Every request received, in arrival order (including ones answered 400/401) — except the
   * token counts (`POST /v1/messages/count_tokens`), which are in {@link countTokensRequests}: a
   * shaper may ask for a count near a threshold, and tests that index or count model calls must
   * not see it.
   */
  readonly requests: RecordedRequest[];
  /** Scripted responses currently queued. */
  readonly queued: number;
  /** Requests refused because they did not fit `contextWindow`. */
  readonly tooLong: number;
  /** Responses currently waiting at a hold point. */
  readonly held: number;
  /** Appends scripted responses to the FIFO; each valid request consumes one. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** Replaces the default handler used when no handler answers and the queue is empty. */
  setDefault(fn: (req: RecordedRequest) => ScriptedResponse): void;
  /** A handler consulted before the queue; its `undefined` falls through. `undefined` clears it. */
  setHandler(fn: ResponseHandler | undefined): void;
  /** The `POST /v1/messages/count_tokens` requests (answered or refused), in arrival order; never in `requests`. */
  readonly countTokensRequests: RecordedRequest[];
  /** Scripts the count_tokens answers (they never consume the Messages queue); `undefined` restores the fake's own count. */
  setCountTokensHandler(fn: CountTokensHandler | undefined): void;
  /** Resolves with `countTokensRequests` once at least `n` were received; rejects after `timeoutMs`. */
  waitForCountTokensRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves with `requests` once at least `n` requests were received; rejects after `timeoutMs`. */
  waitForRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves once at least `n` responses are waiting at a hold point. */
  waitForHeld(n?: number, timeoutMs?: number): Promise<void>;
  /** Requests whose client closed the connection before the fake finished its answer (an aborted stream). */
  readonly clientClosed: RecordedRequest[];
  /** Resolves with `clientClosed` once at least `n` clients closed before their answer was finished; rejects after `timeoutMs`. */
  waitForClientClosed(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Releases every response held now, and the next hold point of every request already received. */
  release(): void;
  /** Drops all connections (stalled streams included) and stops listening. */
  close(): Promise<void>;
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const MAX_BODY = 32 * 1024 * 1024;
const SECRET_HEADERS = new Set(['x-api-key', 'authorization']);
const COUNT_TOKENS_PATH = '/v1/messages/count_tokens';

class FakeAnthropicServer implements FakeAnthropic {
  readonly requests: RecordedRequest[] = [];
  readonly clientClosed: RecordedRequest[] = [];
  url = '';
  port = 0;
  held = 0;
  tooLong = 0;
  private readonly queue: ScriptedResponse[] = [];
  private handler: ResponseHandler | undefined;
  private countHandler: CountTokensHandler | undefined;
  private defaultFn: (req: RecordedRequest) => ScriptedResponse = echoResponse;
  private gate = deferred();
  private readonly listeners = new Set<() => void>();
  private seq = 0;
  private msgSeq = 0;
  private toolSeq = 0;
  private closing = false;
  private source = 'fake-anthropic';
  readonly server: Server;
  private readonly cache: PromptCache;

  constructor(private readonly opts: FakeAnthropicOptions) {
    const minimums = opts.minCacheTokens;
    this.cache = new PromptCache({
      minTokens: (model) => (minimums && Object.hasOwn(minimums, model) ? minimums[model]! : defaultMinCacheTokens(model)),
      ...(opts.now ? { now: opts.now } : {}),
    });
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        appendRunLog(this.source, `internal error: ${err instanceof Error ? err.message : String(err)}`);
        if (!res.headersSent) this.sendError(res, 500, 'api_error', 'fake internal error', 'req_test_0');
        else res.destroy();
      });
    });
  }

  async listen(): Promise<void> {
    this.port = await listenLoopback(this.server);
    this.url = `http://127.0.0.1:${this.port}`;
    this.source = this.opts.logSource ?? `fake-anthropic:${this.port}`;
  }

  get queued(): number {
    return this.queue.length;
  }

  enqueue(...responses: ScriptedResponse[]): void {
    this.queue.push(...responses);
  }

  setDefault(fn: (req: RecordedRequest) => ScriptedResponse): void {
    this.defaultFn = fn;
  }

  setHandler(fn: ResponseHandler | undefined): void {
    this.handler = fn;
  }

  readonly countTokensRequests: RecordedRequest[] = [];

  setCountTokensHandler(fn: CountTokensHandler | undefined): void {
    this.countHandler = fn;
  }

  waitForRequests(n: number, timeoutMs = 10_000): Promise<RecordedRequest[]> {
    return this.waitUntil(
      () => this.requests.length >= n,
      timeoutMs,
      () => `expected ${n} request(s), got ${this.requests.length}`,
    ).then(() => this.requests);
  }

  waitForCountTokensRequests(n: number, timeoutMs = 10_000): Promise<RecordedRequest[]> {
    return this.waitUntil(
      () => this.countTokensRequests.length >= n,
      timeoutMs,
      () => `expected ${n} count_tokens request(s), got ${this.countTokensRequests.length}`,
    ).then(() => this.countTokensRequests);
  }

  waitForClientClosed(n: number, timeoutMs = 10_000): Promise<RecordedRequest[]> {
    return this.waitUntil(
      () => this.clientClosed.length >= n,
      timeoutMs,
      () => `${this.clientClosed.length} of ${n} client closes`,
    ).then(() => this.clientClosed);
  }

  waitForHeld(n = 1, timeoutMs = 10_000): Promise<void> {
    return this.waitUntil(
      () => this.held >= n,
      timeoutMs,
      () => `expected ${n} held response(s), have ${this.held}`,
    );
  }

  release(): void {
    const current = this.gate;
    this.gate = deferred();
    current.resolve();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private changed(): void {
    for (const l of [...this.listeners]) l();
  }

  private waitUntil(cond: () => boolean, timeoutMs: number, describe: () => string): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!cond()) return;
        this.listeners.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`fake-anthropic: timed out after ${timeoutMs} ms: ${describe()}`));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size <= MAX_BODY) chunks.push(chunk as Buffer);
    }
    const id = `req_test_${++this.seq}`;
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown;
    let parseError: string | undefined;
    try {
      parsed = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch (err) {
      parseError = err instanceof Error ? err.message : String(err);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (!SECRET_HEADERS.has(k) && v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const key = (req.headers['x-api-key'] as string | undefined) ?? bearer ?? '';
    const apiKeyMatched = this.opts.apiKey !== undefined ? key === this.opts.apiKey : key !== '';
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const body = (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {}) as RecordedBody;
    const rec: RecordedRequest = { id, seq: this.seq, receivedAt: new Date(), method: req.method ?? 'GET', path, headers, body, rawBody, apiKeyMatched };
    const gate = this.gate; // a release() from now on frees this request's first hold point
    appendRunLog(this.source, JSON.stringify({ request: id, method: rec.method, path, headers, body: parseError ? rawBody : parsed }));
    if (key !== '' && key === (this.opts.canaryKey ?? CANARY_ANTHROPIC_KEY)) {
      appendLine(this.opts.canarySeenPath ?? canarySeenPath(), `${rec.receivedAt.toISOString()} ${this.source} ${id} pid=${process.pid}\n`);
    }
    if (path === COUNT_TOKENS_PATH) this.countTokensRequests.push(rec);
    else this.requests.push(rec);
    this.changed();

    if (size > MAX_BODY) return this.sendError(res, 413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.', id);
    if (path === '/v1/models' && rec.method === 'GET') {
      // The free model list (what `switchboard doctor` uses to check a key): never a billed request.
      if (!apiKeyMatched) return this.sendError(res, 401, 'authentication_error', 'invalid x-api-key', id);
      return this.sendJson(
        res,
        200,
        {
          data: [{ type: 'model', id: 'claude-test', display_name: 'Claude Test', created_at: '2025-01-01T00:00:00Z' }],
          has_more: false,
          first_id: 'claude-test',
          last_id: 'claude-test',
        },
        id,
      );
    }
    if (path !== '/v1/messages' && path !== COUNT_TOKENS_PATH) return this.sendError(res, 404, 'not_found_error', 'Not Found', id);
    if (rec.method !== 'POST') return this.sendError(res, 405, 'invalid_request_error', `Method ${rec.method} not allowed`, id);
    if (!apiKeyMatched) return this.sendError(res, 401, 'authentication_error', 'invalid x-api-key', id);
    if (!req.headers['anthropic-version']) return this.sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required', id);
    if (parseError !== undefined || parsed === undefined) {
      return this.sendError(res, 400, 'invalid_request_error', 'There was an error parsing the body of your request: invalid JSON', id);
    }
    const invalid = path === COUNT_TOKENS_PATH ? validateCountTokensRequest(parsed) : validateMessagesRequest(parsed);
    if (invalid) return this.sendError(res, 400, 'invalid_request_error', invalid.message, id);
    if (path === COUNT_TOKENS_PATH) return this.answerCount(rec, this.countHandler?.(rec) ?? {}, res);
    const tooLong = contextWindowRefusal(body, this.opts.contextWindow);
    if (tooLong) {
      this.tooLong++;
      return this.sendError(res, 400, 'invalid_request_error', tooLong, id);
    }
    const scripted = this.handler?.(rec) ?? this.queue.shift() ?? this.defaultFn(rec);
    await this.respond(rec, scripted, gate, res, this.cache.account(parsed as Record<string, unknown>));
  }

  /** Answers a valid count_tokens request as scripted (see {@link ScriptedCount}). */
  private async answerCount(rec: RecordedRequest, scripted: ScriptedCount, res: ServerResponse): Promise<void> {
    if (scripted.error) {
      const e = scripted.error;
      return this.sendError(res, e.status, e.type, e.message, rec.id, e.headers, e.details);
    }
    if (scripted.stall) {
      if (!res.closed) await new Promise<void>((resolve) => res.once('close', () => resolve()));
      return;
    }
    rec.countedTokens = scripted.inputTokens ?? requestTokens(rec.body);
    return this.sendJson(res, 200, { input_tokens: rec.countedTokens }, rec.id);
  }

  /** Waits at a hold point until released or the client goes away; returns false if it went away. */
  private async holdPoint(gate: Deferred, closed: Promise<void>, res: ServerResponse): Promise<boolean> {
    this.held++;
    this.changed();
    await Promise.race([gate.promise, closed]);
    this.held--;
    this.changed();
    return !res.destroyed && !this.closing;
  }

  private async respond(rec: RecordedRequest, r: ScriptedResponse, firstGate: Deferred, res: ServerResponse, cache: CacheAccount): Promise<void> {
    const closed = new Promise<void>((resolve) =>
      res.once('close', () => {
        // The client went away before the answer was finished (not the fake closing down).
        if (!res.writableEnded && !this.closing) {
          this.clientClosed.push(rec);
          this.changed();
        }
        resolve();
      }),
    );
    let gate = firstGate;
    if (r.hold) {
      if (!(await this.holdPoint(gate, closed, res))) return;
      gate = this.gate;
    }
    if (r.error) {
      const e = r.error;
      return this.sendError(res, e.status, e.type, e.message, rec.id, e.headers, e.details);
    }
    const built = this.buildMessage(rec, r, cache);
    const { message, partialJson } = r.cutAtMaxTokens ? cutAtMaxTokens(built, rec.body.max_tokens ?? 0) : { message: built, partialJson: undefined };
    if (!(rec.body.stream !== true && r.streamError)) {
      // The answer starts (not an HTTP error): what this request wrote is readable from now on.
      cache.commit();
      rec.usage = message.usage;
    }
    const headers = { ...(r.headers ?? {}), 'request-id': rec.id };
    if (rec.body.stream !== true) {
      if (r.streamError) {
        const type = r.streamError.type;
        return this.sendError(res, statusForErrorType(type), type, r.streamError.message ?? defaultErrorMessage(type), rec.id);
      }
      if (r.holdAfterEvents !== undefined && !(await this.holdPoint(gate, closed, res))) return;
      const json = JSON.stringify(message);
      if (r.stallAfterEvents !== undefined || r.endAfterEvents !== undefined || r.destroyAfterEvents !== undefined) {
        res.writeHead(200, { ...headers, 'content-type': 'application/json' });
        res.flushHeaders();
        if (r.stallAfterEvents !== undefined) return closed;
        if (r.destroyAfterEvents !== undefined) return void res.destroy();
        res.end(json.slice(0, Math.floor(json.length / 2)));
        return;
      }
      return this.sendJson(res, 200, message, rec.id, r.headers);
    }
    const events = buildStreamEvents(message, partialJson);
    res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const after = r.streamError?.afterEvents ?? r.stallAfterEvents ?? r.endAfterEvents ?? r.holdAfterEvents ?? r.destroyAfterEvents;
    const cut = after === undefined ? events.length : Math.max(0, Math.min(after, events.length));
    for (const ev of events.slice(0, cut)) res.write(encodeSse(ev));
    if (r.streamError) {
      const type = r.streamError.type;
      const data = { type: 'error', error: { type, message: r.streamError.message ?? defaultErrorMessage(type) } };
      res.end(`event: error\ndata: ${JSON.stringify(data)}\n\n`);
    } else if (r.stallAfterEvents !== undefined) {
      await closed;
    } else if (r.endAfterEvents !== undefined) {
      res.end();
    } else if (r.holdAfterEvents !== undefined) {
      if (!(await this.holdPoint(gate, closed, res))) return;
      for (const ev of events.slice(cut)) res.write(encodeSse(ev));
      res.end();
    } else if (r.destroyAfterEvents !== undefined) {
      await new Promise<void>((resolve) => res.write('', () => resolve()));
      res.destroy();
    } else {
      res.end();
    }
  }

  private buildMessage(rec: RecordedRequest, r: ScriptedResponse, cache: CacheAccount): WireMessage {
    return buildScriptedMessage(
      rec,
      r,
      {
        messageId: () => `msg_test_${++this.msgSeq}`,
        toolUseId: () => `toolu_test_${++this.toolSeq}`,
        fallback: this.defaultFn,
      },
      cache.usage,
    );
  }

  private sendJson(res: ServerResponse, status: number, body: unknown, id: string, extra?: Record<string, string>): void {
    const json = JSON.stringify(body);
    res.writeHead(status, {
      ...(extra ?? {}),
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(json),
      'request-id': id,
    });
    res.end(json);
  }

  private sendError(res: ServerResponse, status: number, type: string, message: string, id: string, headers?: Record<string, string>, details?: object): void {
    this.sendJson(res, status, errorBody(type, message, id, details), id, headers);
  }
}

/** Starts a fake Anthropic Messages API on 127.0.0.1 with a free port. */
export async function startFakeAnthropic(opts: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const fake = new FakeAnthropicServer(opts);
  await fake.listen();
  return fake;
}
