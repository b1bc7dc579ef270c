import { apiThrottler } from '@grammyjs/transformer-throttler';
import { Api } from 'grammy';
import type { Logger } from 'pino';
import type { TelegramAccountConfig } from './account.js';
import { boundedRetry } from './retry-policy.js';

/** The two API clients of one bot: outbound calls (throttled, retried) and polling (bare). */
export interface TelegramApis {
  /** Sends, edits, chat actions, callback answers: per-chat throttle plus bounded retries (network, 5xx, 429). */
  api: Api;
  /** getUpdates only: the poller handles its own errors, aborts and backoff. */
  pollApi: Api;
  /** The Bot API host, for logs. */
  host: string;
}

type ApiConfig = Pick<
  TelegramAccountConfig,
  'token' | 'apiRoot' | 'chatSendInterval' | 'maxRetryAttempts' | 'pollTimeout' | 'apiTimeout' | 'retryBaseDelay' | 'retryMaxDelay'
>;

/** The host of an API root, or the root itself if it does not parse. */
export function apiHost(apiRoot: string): string {
  try {
    return new URL(apiRoot).host;
  } catch {
    return apiRoot;
  }
}

/** Builds the clients against the account's `apiRoot`; `stop` aborts pending retries and calls. */
export function createApis(cfg: ApiConfig, log: Logger, stop: AbortSignal): TelegramApis {
  const apiRoot = cfg.apiRoot.replace(/\/+$/, '');
  const host = apiHost(apiRoot);
  const api = new Api(cfg.token, { apiRoot, timeoutSeconds: Math.max(1, Math.ceil(cfg.apiTimeout / 1000)) });
  const perChat = { maxConcurrent: 1, minTime: cfg.chatSendInterval };
  // Installed first, so it runs innermost: a retried call queues behind the chat's throttle again.
  api.config.use(
    apiThrottler({
      global: { reservoir: 30, reservoirRefreshAmount: 30, reservoirRefreshInterval: 1000 },
      group: perChat,
      out: perChat,
    }),
  );
  api.config.use(
    boundedRetry({
      maxAttempts: cfg.maxRetryAttempts,
      baseDelayMs: cfg.retryBaseDelay,
      maxDelayMs: cfg.retryMaxDelay,
      maxRetryAfterMs: 120_000,
      host,
      token: cfg.token,
      log,
      stop,
    }),
  );
  const pollApi = new Api(cfg.token, { apiRoot, timeoutSeconds: Math.ceil(cfg.pollTimeout / 1000) + 60 });
  return { api, pollApi, host };
}
