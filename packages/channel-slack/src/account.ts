/**
 * One Slack workspace app account, as the gateway's config validates it
 * (`slackAccountSchema` in apps/gateway/src/config-channels.ts). Durations are milliseconds.
 */
export interface SlackAccountConfig {
  botToken: string;
  mode: 'socket' | 'http';
  /** Socket Mode: the app-level token (`xapp-…`). */
  appToken?: string | undefined;
  /** HTTP mode: the signing secret for `X-Slack-Signature`. */
  signingSecret?: string | undefined;
  /** Web API root, e.g. `https://slack.com/api/`. */
  apiUrl: string;
  /** Socket Mode: no envelope, no server ping and no pong for this long → the socket is deaf. */
  livenessTimeout: number;
  /** Socket Mode: the SDK pings every third of this and drops the socket without a pong within it. */
  clientPingTimeout: number;
  /** Socket Mode: the longest wait between reconnect attempts. */
  reconnectBackoffMax: number;
  /** Web API retries of one call (429 honours Retry-After; 5xx and network errors back off; 401/403 never). */
  maxRetries: number;
  /** Minimum time between edits of a streamed draft. */
  editInterval: number;
  /** After Slack refused a token (invalid_auth, 401…): how long until it is tried again. */
  refusedRetryInterval: number;
  /** Time limit of one Web API request. */
  apiTimeout?: number | undefined;
  /** When true, /readyz answers 503 while this account is down. */
  required: boolean;
}
