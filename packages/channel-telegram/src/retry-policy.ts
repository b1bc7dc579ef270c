import { HttpError, type Transformer } from 'grammy';
import type { Logger } from 'pino';
import { describeError, networkCause } from './errors.js';

/** How outbound Bot API calls are retried. */
export interface RetryPolicyOptions {
  /** Retries after the first attempt (network errors, 5xx, 429 with a short `retry_after`). */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 asking for a longer wait than this is not retried (the caller sees the 429). */
  maxRetryAfterMs: number;
  /** The Bot API host (from `apiRoot`), named in every network failure log. */
  host: string;
  token: string;
  log: Logger;
  /** Aborted on stop: pending waits end at once and in-flight calls are cancelled. */
  stop: AbortSignal;
}

/** The delay before retry `n` (1-based): exponential from `base`, capped at `max`. */
export function backoffDelay(n: number, base: number, max: number): number {
  return Math.min(max, base * 2 ** Math.max(0, n - 1));
}

/** Waits `ms`, or rejects with `reason` as soon as any of `signals` aborts. */
function pause(ms: number, signals: Array<AbortSignal | undefined>, reason: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const live = signals.filter((s): s is AbortSignal => s !== undefined);
    if (live.some((s) => s.aborted)) return reject(reason);
    const done = () => {
      clearTimeout(t);
      for (const s of live) s.removeEventListener('abort', done);
      reject(reason);
    };
    const t = setTimeout(() => {
      for (const s of live) s.removeEventListener('abort', done);
      resolve();
    }, ms);
    for (const s of live) s.addEventListener('abort', done, { once: true });
  });
}

/**
 * A grammY transformer with a bounded outbound policy (replaces `@grammyjs/auto-retry`, which
 * retries network errors without limit, up to an hour apart): network errors, 5xx and short 429s
 * are retried at most `maxAttempts` times with capped backoff; everything else (400, 401, 403, an
 * envelope without an error code) is returned at once. Each retry logs one line naming the method,
 * host and cause (`ECONNREFUSED 127.0.0.1`, `timeout api.telegram.org`). Stop cancels it all.
 */
export function boundedRetry(options: RetryPolicyOptions): Transformer {
  return (async (prev: Parameters<Transformer>[0], method: string, payload: unknown, signal?: AbortSignal) => {
    // grammY may hand over its abort-controller shim's signal: only native signals can be combined.
    const callSignal = signal instanceof AbortSignal ? AbortSignal.any([signal, options.stop]) : (signal ?? options.stop);
    for (let attempt = 1; ; attempt++) {
      let res: { ok: boolean; error_code?: unknown; parameters?: { retry_after?: unknown } } | undefined;
      let netErr: unknown;
      try {
        res = (await prev(method as never, payload as never, callSignal as never)) as typeof res;
      } catch (err) {
        if (!(err instanceof HttpError) || callSignal.aborted || options.stop.aborted) throw err;
        netErr = err;
      }
      if (res?.ok) return res;
      const code = typeof res?.error_code === 'number' ? res.error_code : undefined;
      const after = typeof res?.parameters?.retry_after === 'number' ? res.parameters.retry_after * 1000 : undefined;
      const retriable = netErr !== undefined || (code !== undefined && code >= 500) || (after !== undefined && after <= options.maxRetryAfterMs);
      if (!retriable || attempt > options.maxAttempts) {
        if (netErr !== undefined) throw netErr;
        return res;
      }
      const delay = after ?? backoffDelay(attempt, options.baseDelayMs, options.maxDelayMs);
      const net = netErr !== undefined ? networkCause(netErr) : undefined;
      const cause = net ? net.cause : code !== undefined ? `HTTP ${code}` : 'error';
      options.log.warn(
        {
          event: 'telegram_api_retry',
          method,
          host: options.host,
          cause,
          attempt,
          maxAttempts: options.maxAttempts,
          retryInMs: delay,
          ...(netErr !== undefined ? { error: describeError(netErr, options.token) } : {}),
        },
        `telegram: ${method} failed (${cause} ${options.host}); retry ${attempt} of ${options.maxAttempts} in ${delay} ms`,
      );
      await pause(delay, [signal, options.stop], netErr ?? new Error(`${method}: stopped while waiting to retry`));
    }
  }) as Transformer;
}
