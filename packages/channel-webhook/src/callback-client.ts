import type { ChannelFactoryDeps, ChannelHealth } from '@switchboard/core';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, signatureHeader } from './signing.js';
import type { WebhookCallback } from './wire.js';

/** How the callback client reaches the platform. */
export interface CallbackClientOptions {
  url: string;
  secret: string;
  /** Extra attempts after a retryable failure. */
  retries: number;
  /** Delay before the first retry; doubled for each further one, capped at `MAX_RETRY_DELAY_MS`. */
  retryDelayMs: number;
  timeoutMs: number;
  log: ChannelFactoryDeps['log'];
}

/** The outcome of delivering one callback (after retries). */
export type DeliveryOutcome = { ok: true; status: number; attempts: number; messageId: string | null } | { ok: false; attempts: number; error: string };

/** Longest wait between two attempts, whatever the backoff or a Retry-After asks. */
export const MAX_RETRY_DELAY_MS = 30_000;
/** Deliveries in a row that must fail before the channel reports itself down. */
export const DOWN_AFTER_FAILURES = 3;
const MAX_RESPONSE_BYTES = 64 * 1024;

type Attempt = { ok: true; status: number; messageId: string | null } | { ok: false; retryable: boolean; error: string; retryAfterMs?: number };

/** Retryable answers: the platform is busy or broken, not refusing this body. */
const retryableStatus = (s: number) => s >= 500 || s === 408 || s === 429;

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

async function readMessageId(res: Response): Promise<string | null> {
  const text = (await res.text()).slice(0, MAX_RESPONSE_BYTES);
  try {
    const id = (JSON.parse(text) as { messageId?: unknown } | null)?.messageId;
    return typeof id === 'string' && id.length > 0 && id.length <= 256 ? id : null;
  } catch {
    return null;
  }
}

/**
 * POSTs signed JSON callbacks to the platform, retrying 5xx / 408 / 429 / network errors with a
 * bounded exponential backoff. Tracks consecutive failed deliveries for `health()`. Never throws.
 */
export class CallbackClient {
  private failures = 0;
  private lastError = '';
  private readonly stopping = new AbortController();
  /** Where logs may name the target: origin and path only (a query may hold the platform's token). */
  private readonly target: string;
  /** The path the signature covers: the callback URL's path as fetch sends it, without the query. */
  private readonly path: string;

  constructor(private readonly options: CallbackClientOptions) {
    const u = new URL(options.url);
    this.target = `${u.origin}${u.pathname}`;
    this.path = u.pathname;
  }

  /**
   * Delivers one callback; resolves when the platform answered 2xx or every attempt failed.
   * `opts.retries` overrides the configured retries (0 for best-effort callbacks: one attempt).
   */
  async deliver(payload: WebhookCallback, opts: { retries?: number } = {}): Promise<DeliveryOutcome> {
    const retries = opts.retries ?? this.options.retries;
    const body = JSON.stringify(payload);
    const log = this.options.log.child({ callback: payload.type, deliveryId: payload.id, target: this.target });
    let attempts = 0;
    for (;;) {
      if (this.stopping.signal.aborted) return this.failed(log, attempts, 'the channel stopped before the callback was delivered');
      attempts++;
      const r = await this.attempt(body, payload.id);
      if (r.ok) {
        if (this.failures > 0) log.info({ attempts, previousFailures: this.failures }, 'callback target recovered');
        this.failures = 0;
        log.debug({ status: r.status, attempts }, 'callback delivered');
        return { ok: true, status: r.status, attempts, messageId: r.messageId };
      }
      if (!r.retryable || attempts > retries) return this.failed(log, attempts, r.error);
      const backoff = Math.min(this.options.retryDelayMs * 2 ** (attempts - 1), MAX_RETRY_DELAY_MS);
      const delay = Math.min(Math.max(backoff, r.retryAfterMs ?? 0), MAX_RETRY_DELAY_MS);
      log.warn({ attempt: attempts, error: r.error, retryInMs: delay }, 'callback failed; retrying');
      await this.sleep(delay);
    }
  }

  private failed(log: ChannelFactoryDeps['log'], attempts: number, error: string): DeliveryOutcome {
    this.failures++;
    this.lastError = error;
    log.error({ attempts, error, consecutiveFailures: this.failures }, 'callback not delivered; giving up');
    return { ok: false, attempts, error };
  }

  private async attempt(body: string, deliveryId: string): Promise<Attempt> {
    const ts = Math.floor(Date.now() / 1000);
    try {
      const res = await fetch(this.options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'switchboard-webhook/1',
          'x-switchboard-delivery': deliveryId,
          [TIMESTAMP_HEADER]: String(ts),
          [SIGNATURE_HEADER]: signatureHeader(this.options.secret, ts, { method: 'POST', path: this.path, body }),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, messageId: await readMessageId(res).catch(() => null) };
      await res.body?.cancel().catch(() => undefined);
      const after = retryAfterMs(res.headers.get('retry-after'));
      return { ok: false, retryable: retryableStatus(res.status), error: `HTTP ${res.status}`, ...(after !== undefined ? { retryAfterMs: after } : {}) };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const error = e.name === 'TimeoutError' ? `no answer within ${this.options.timeoutMs} ms` : `network error: ${e.cause?.code ?? e.message}`;
      return { ok: false, retryable: true, error };
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.stopping.signal;
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Up until deliveries start failing: degraded after one failed delivery, down after several in a row. */
  health(): ChannelHealth {
    if (this.failures === 0) return { state: 'up' };
    const detail = `${this.failures} callback deliver${this.failures === 1 ? 'y' : 'ies'} in a row failed (last: ${this.lastError})`;
    return { state: this.failures >= DOWN_AFTER_FAILURES ? 'down' : 'degraded', detail };
  }

  /** Cuts pending backoff waits short: queued retries give up, in-flight requests settle on their own. */
  stop(): void {
    this.stopping.abort();
  }
}
