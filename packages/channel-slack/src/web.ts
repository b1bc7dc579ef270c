import { LogLevel, WebClient, type Logger as SlackLogger } from '@slack/web-api';
import type { Logger } from 'pino';

/** Adapts pino to the Slack SDKs' logger; the SDKs' chatty debug/info go one level down. */
export function slackLogger(log: Logger): SlackLogger {
  let level = LogLevel.INFO;
  return {
    debug: (...m: unknown[]) => log.trace({ sdk: 'slack' }, m.map(String).join(' ')),
    info: (...m: unknown[]) => log.debug({ sdk: 'slack' }, m.map(String).join(' ')),
    warn: (...m: unknown[]) => log.warn({ sdk: 'slack' }, m.map(String).join(' ')),
    error: (...m: unknown[]) => log.error({ sdk: 'slack' }, m.map(String).join(' ')),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => undefined,
  };
}

/** Options for {@link createWebClient}. */
export interface WebClientSpec {
  apiUrl: string;
  /** Retries after 429 (Retry-After honoured), 5xx and network errors. Always explicit: the SDK defaults to 10 over ~30 min. */
  retries: number;
  timeoutMs: number;
  log: Logger;
  /** Fail fast on 429 instead of waiting (drafts: a skipped edit is cheaper than a stalled queue). */
  rejectRateLimitedCalls?: boolean;
}

/** A Web API client (the one Bolt uses) pointed at the account's `apiUrl`, with explicit retries and timeout. */
export function createWebClient(token: string, spec: WebClientSpec): WebClient {
  return new WebClient(token, {
    slackApiUrl: spec.apiUrl,
    retryConfig: { retries: spec.retries, factor: 2, minTimeout: 500, maxTimeout: 10_000 },
    timeout: spec.timeoutMs,
    rejectRateLimitedCalls: spec.rejectRateLimitedCalls ?? false,
    logger: slackLogger(spec.log),
  });
}

/** A short, secret-free code for a Web API failure: the platform error (`channel_not_found`), `ratelimited`, `http_503`, … */
export function slackErrorCode(err: unknown): string {
  const e = err as { code?: string; data?: { error?: string }; statusCode?: number };
  if (e?.data?.error) return e.data.error;
  if (e?.code === 'slack_webapi_rate_limited_error') return 'ratelimited';
  if (e?.code === 'slack_webapi_http_error') return `http_${e.statusCode ?? 'error'}`;
  if (e?.code === 'slack_webapi_request_error') return 'request_error';
  return 'error';
}

/** The Retry-After of a rate-limited call (ms), or null. */
export function retryAfterMs(err: unknown): number | null {
  const e = err as { code?: string; retryAfter?: number };
  return e?.code === 'slack_webapi_rate_limited_error' && typeof e.retryAfter === 'number' ? e.retryAfter * 1000 : null;
}
