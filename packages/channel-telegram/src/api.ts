import { autoRetry } from '@grammyjs/auto-retry';
import { apiThrottler } from '@grammyjs/transformer-throttler';
import { Api } from 'grammy';
import type { TelegramAccountConfig } from './options.js';

/** The two API clients of one bot: outbound calls (throttled, retried) and polling (bare). */
export interface TelegramApis {
  /** Sends, edits, chat actions, callback answers: per-chat throttle plus auto-retry on 429/5xx. */
  api: Api;
  /** getUpdates only: the poller handles its own errors, aborts and backoff. */
  pollApi: Api;
}

/** Builds the clients against the account's `apiRoot`. */
export function createApis(cfg: Pick<TelegramAccountConfig, 'token' | 'apiRoot' | 'chatSendInterval' | 'maxRetryAttempts' | 'pollTimeout'>): TelegramApis {
  const apiRoot = cfg.apiRoot.replace(/\/+$/, '');
  const api = new Api(cfg.token, { apiRoot, timeoutSeconds: 60 });
  const perChat = { maxConcurrent: 1, minTime: cfg.chatSendInterval };
  // Installed first, so it runs innermost: a retried call queues behind the chat's throttle again.
  api.config.use(
    apiThrottler({
      global: { reservoir: 30, reservoirRefreshAmount: 30, reservoirRefreshInterval: 1000 },
      group: perChat,
      out: perChat,
    }),
  );
  api.config.use(autoRetry({ maxRetryAttempts: cfg.maxRetryAttempts, maxDelaySeconds: 120 }));
  const pollApi = new Api(cfg.token, { apiRoot, timeoutSeconds: Math.ceil(cfg.pollTimeout / 1000) + 60 });
  return { api, pollApi };
}
