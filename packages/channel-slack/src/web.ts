import { setTimeout as sleep } from 'node:timers/promises';
import { LogLevel, WebClient, type Logger as SlackLogger } from '@slack/web-api';
import type { Logger } from 'pino';
import { describeSlackError, hostOf } from './slack-errors.js';

export { retryAfterMs, slackErrorCode } from './slack-errors.js';

/** Adapts pino to the Slack SDKs' logger; the SDKs' chatty debug/info go one level down. */
export function slackLogger(log: Logger): SlackLogger {
  let level = LogLevel.INFO;
  const text = (m: unknown[]) => m.map((x) => (typeof x === 'string' ? x : safeString(x))).join(' ');
  return {
    debug: (...m: unknown[]) => log.trace({ sdk: 'slack' }, text(m)),
    info: (...m: unknown[]) => log.debug({ sdk: 'slack' }, text(m)),
    // The SDK's per-request "http request failed fetch failed" names neither host nor cause: our policy logs those.
    warn: (...m: unknown[]) => (String(m[0]).startsWith('http request failed') ? log.debug({ sdk: 'slack' }, text(m)) : log.warn({ sdk: 'slack' }, text(m))),
    error: (...m: unknown[]) => log.error({ sdk: 'slack' }, text(m)),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => undefined,
  };
}

function safeString(x: unknown): string {
  try {
    return String(x);
  } catch {
    return '[unprintable]';
  }
}

/** Options for {@link createWebClient}. */
export interface WebClientSpec {
  apiUrl: string;
  /** Retries of one call after a network error or a 5xx (bounded backoff); 429s honour Retry-After up to as many times. 401/403 are never retried. */
  retries: number;
  timeoutMs: number;
  log: Logger;
  /** Aborted when the channel stops: in-flight requests and pending retries end at once. */
  signal: AbortSignal;
  /** Fail fast on 429 instead of waiting (drafts: a skipped edit is cheaper than a stalled queue). */
  rejectRateLimitedCalls?: boolean;
}

const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 10_000;

/**
 * fetch with the outbound policy: a per-attempt timeout, bounded retries with backoff for network
 * errors and 5xx, one warn line per retry step naming the method, host and cause, and the stop
 * signal cancelling the request and any wait.
 */
export function policyFetch(spec: Pick<WebClientSpec, 'apiUrl' | 'retries' | 'timeoutMs' | 'log' | 'signal'>): typeof fetch {
  const host = hostOf(spec.apiUrl);
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const call = url.slice(url.lastIndexOf('/') + 1).split('?')[0] ?? '';
    for (let attempt = 0; ; attempt++) {
      spec.signal.throwIfAborted();
      const signals = [spec.signal, ...(spec.timeoutMs > 0 ? [AbortSignal.timeout(spec.timeoutMs)] : []), ...(init?.signal ? [init.signal] : [])];
      let failure: string;
      try {
        const res = await fetch(input, { ...init, signal: AbortSignal.any(signals) });
        if (res.status < 500 || attempt >= spec.retries) return res;
        await res.body?.cancel().catch(() => undefined);
        failure = `http_${res.status}`;
      } catch (err) {
        if (spec.signal.aborted || attempt >= spec.retries) throw err;
        failure = describeSlackError(err, spec.timeoutMs).cause ?? 'request failed';
      }
      const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** attempt);
      spec.log.warn({ call, host, cause: failure, attempt: attempt + 1, retryInMs: delay }, 'slack unreachable');
      await sleep(delay, undefined, { signal: spec.signal });
    }
  };
}

/** A Web API client (the one Bolt uses) pointed at the account's `apiUrl`, with the outbound policy of {@link policyFetch}. */
export function createWebClient(token: string, spec: WebClientSpec): WebClient {
  return new WebClient(token, webClientOptions(spec));
}

/** The WebClient options of {@link createWebClient} (also for the Socket Mode client's own Web API calls). */
export function webClientOptions(spec: WebClientSpec) {
  return {
    slackApiUrl: spec.apiUrl,
    // Network errors and 5xx are retried inside policyFetch; the SDK's own retry loop only waits out 429s.
    retryConfig: {
      retries: spec.retries,
      factor: 2,
      minTimeout: RETRY_BASE_MS,
      maxTimeout: RETRY_MAX_MS,
      onFailedAttempt: (err: unknown) => {
        // The SDK signals "waited out a 429, try again" with a request error wrapping this message.
        if (spec.signal.aborted || !String((err as { message?: unknown })?.message).includes('A rate limit was exceeded (url:')) throw err;
      },
    },
    timeout: 0,
    fetch: policyFetch(spec),
    rejectRateLimitedCalls: spec.rejectRateLimitedCalls ?? false,
    logger: slackLogger(spec.log),
  };
}
