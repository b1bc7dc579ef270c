/**
 * One Telegram bot account as the gateway hands it over: the validated config of
 * `channels.telegram.accounts.<id>` (apps/gateway/src/config-channels.ts), durations in
 * milliseconds. Boundary keys (dmPolicy, allowFrom, groups…) are enforced by the gateway's gate
 * in `ctx.accept`, so the adapter only reads the platform keys below.
 */
export interface TelegramAccountConfig {
  token: string;
  /** Bot API root without a trailing slash (tests, self-hosted Bot API servers). */
  apiRoot: string;
  mode: 'polling' | 'webhook';
  webhookSecret?: string;
  webhookUrl?: string;
  /** Long-poll timeout of one getUpdates call. */
  pollTimeout: number;
  /** A getUpdates call that has not completed within this long is aborted and restarted. */
  pollStallTimeout: number;
  typingInterval: number;
  editInterval: number;
  chatSendInterval: number;
  /** Retries of an outbound call after a network error, a 5xx or a short 429 (never after 4xx). */
  maxRetryAttempts: number;
  /** First retry delay; doubles per retry up to `retryMaxDelay`. */
  retryBaseDelay: number;
  retryMaxDelay: number;
  /** Time limit of one outbound Bot API call (not getUpdates). */
  apiTimeout: number;
  /** How often an account whose token the Bot API refused (401) is tried again. */
  authRetryInterval: number;
  maxInboundMediaBytes: number;
  mentionPatterns: string[];
  required: boolean;
}

/** The update kinds the adapter asks Telegram for (polling and webhook alike). */
export const ALLOWED_UPDATES = ['message', 'callback_query'] as const;

/** Telegram's limit on one message's text, in UTF-16 code units after entity parsing. */
export const MAX_MESSAGE_CHARS = 4096;

/** The webhook route of an account. */
export function webhookPath(account: string): string {
  return `/channels/telegram/${encodeURIComponent(account)}/webhook`;
}
