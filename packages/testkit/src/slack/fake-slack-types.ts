import type { SlackEventFactory } from './slack-events.js';
import type { SlackFileObject, SlackUploadedFile } from './slack-files.js';

/** The workspace, bot and app the fake impersonates; every field has a deterministic default. */
export interface SlackIdentity {
  teamId: string;
  teamName: string;
  /** The bot's user id (`auth.test` `user_id`; the `<@U…>` in `app_mention` text). */
  botUserId: string;
  botId: string;
  appId: string;
  /** A human user events come from by default. */
  userId: string;
  /** Default public channel and DM channel for event builders. */
  channelId: string;
  imChannelId: string;
  /** The legacy verification token placed in event envelopes (not a secret here). */
  verificationToken: string;
}

/** Options for {@link startFakeSlack}. */
export interface FakeSlackOptions {
  /** Bot tokens accepted by the Web API; default `[CANARY_SLACK_BOT_TOKEN]`. */
  botTokens?: string[];
  /** App-level token accepted by `apps.connections.open`; default `CANARY_SLACK_APP_TOKEN`. */
  appToken?: string;
  /** Default signing secret for deliveries; default `CANARY_SLACK_SIGNING_SECRET`. */
  signingSecret?: string;
  identity?: Partial<SlackIdentity>;
  /** When > 0, the server pings every live, non-deaf socket at this interval (Slack does). Default 0. */
  serverPingIntervalMs?: number;
  /** Run-log source name; default `fake-slack`. */
  logSource?: string;
}

/** Injected failure for the next call of a Web API method (`*` matches any method). */
export type SlackFault =
  | { status: 429; retryAfter: number; delayMs?: number }
  | { status: 401 | 403 | 500 | 502 | 503; delayMs?: number }
  | { error: string; delayMs?: number }
  | { delayMs: number }
  | { drop: true };

/** One Web API request as received (the token is never recorded). */
export interface SlackCall {
  seq: number;
  method: string;
  /** Parsed params: JSON fields (`blocks`, `attachments`, `metadata`) decoded, `'true'`/`'false'` flags as booleans; no `token`. */
  params: Record<string, unknown>;
  tokenKind: 'bot' | 'app' | 'none' | 'unknown';
  contentType: 'form' | 'json' | 'none';
  receivedAt: number;
  /** Filled in when the response is sent. */
  status?: number;
  ok?: boolean;
  error?: string;
}

/** A message the bot posted, in its current state. */
export interface SlackStoredMessage {
  channel: string;
  ts: string;
  text: string;
  blocks?: unknown;
  attachments?: unknown;
  thread_ts?: string;
  unfurl_links?: boolean;
  unfurl_media?: boolean;
  /** Number of successful `chat.update` calls. */
  edits: number;
  deleted: boolean;
  /** Text of every version, oldest first. */
  history: string[];
}

/** A `chat.postEphemeral` message. */
export interface SlackEphemeral {
  channel: string;
  user: string;
  text: string;
  blocks?: unknown;
  thread_ts?: string;
  message_ts: string;
}

/** Options for signed HTTP deliveries. */
export interface SlackDeliverOptions {
  /** Default: the fake's `signingSecret`. */
  signingSecret?: string;
  retryNum?: number;
  retryReason?: string;
  /** Added to the current time for `X-Slack-Request-Timestamp` (negative = in the past). */
  timestampSkewSec?: number;
  /** Modify the body after signing: `true` alters the event text; a function rewrites the raw body. */
  tamper?: boolean | ((body: string) => string);
  /** Overrides the computed signature header value. */
  signature?: string;
  eventId?: string;
  headers?: Record<string, string>;
  /** Abort the POST after this long (default 10 000 ms). */
  timeoutMs?: number;
}

/** The target's answer to a delivery. */
export interface SlackDeliveryResult {
  status: number;
  body: string;
  headers: Record<string, string>;
  elapsedMs: number;
  /** The raw body that was POSTed (after any tampering). */
  sentBody: string;
  eventId?: string;
}

/** A Socket Mode connection the fake accepted. */
export interface SlackSocketInfo {
  id: number;
  openedAt: number;
  closedAt?: number;
  closeCode?: number;
  deaf: boolean;
  pingsReceived: number;
  pongsSent: number;
  pingsSent: number;
  envelopesSent: number;
}

/** A client's acknowledgement of an envelope. */
export interface SlackSocketAck {
  envelopeId: string;
  type: string;
  socketId: number;
  payload?: unknown;
  /** From sending the envelope to receiving the ack. */
  elapsedMs: number;
  ackedAt: number;
}

/** Options for `socketSend*`. */
export interface SlackSocketSendOptions {
  /** Waits this long for a live, non-deaf socket and then for the ack (default 10 000 ms). */
  timeoutMs?: number;
  retryAttempt?: number;
  retryReason?: string;
  acceptsResponsePayload?: boolean;
  envelopeId?: string;
}

/** Connection accounting, for "never more than one live socket" assertions. */
export interface SlackSocketStats {
  live: number;
  /** Highest number of simultaneously open sockets seen. */
  maxLive: number;
  connectionsOpened: number;
  /** Successful and failed `apps.connections.open` calls. */
  connectionsOpenCalls: number;
}

/** A loopback fake of Slack's Web API, Events API delivery and Socket Mode. */
export interface FakeSlack {
  /** `http://127.0.0.1:PORT/api/`, for the SDKs' `slackApiUrl`. */
  readonly apiUrl: string;
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly port: number;
  /** The ids the fake answers with and builds events from. */
  readonly identity: SlackIdentity;
  /** Event and payload builders bound to `identity`, with their own `ts` counter. */
  readonly events: SlackEventFactory;
  /** Every Web API call in arrival order. */
  readonly calls: SlackCall[];
  /** Every ack received, in order. */
  readonly acks: SlackSocketAck[];
  /** `chat.postEphemeral` messages, in order. */
  readonly ephemerals: SlackEphemeral[];
  /** Successful `reactions.add` calls. */
  readonly reactions: Array<{ channel: string; timestamp: string; name: string }>;
  /** Current (non-deleted unless asked) bot messages in `channel`, oldest first; every channel if omitted. */
  messages(channel?: string, opts?: { includeDeleted?: boolean }): SlackStoredMessage[];
  /**
   * Registers a file a user shares: served at its `url_private_download` only with a bot token.
   * Put the returned object in a message event's `files` (with `subtype: 'file_share'`).
   */
  addUserFile(init: { name: string; mimetype?: string; content: string | Uint8Array; title?: string }): SlackFileObject;
  /** Files the bot shared through the external upload flow (`files.getUploadURLExternal`, upload, `files.completeUploadExternal`), oldest first. */
  readonly uploads: readonly SlackUploadedFile[];
  /** Calls of one method. */
  callsTo(method: string): SlackCall[];
  /** Queues a fault for the next call of `method`. */
  failNext(method: string, fault: SlackFault): void;
  /** Resolves with `fn()`'s first truthy value, re-checked on every state change; rejects after `timeoutMs` (default 5000). */
  waitFor<T>(fn: () => T | undefined | null | false, timeoutMs?: number, what?: string): Promise<T>;
  /** Wraps `event` in an `event_callback` envelope, signs it and POSTs it to `targetUrl` (e.g. `…/slack/events`). */
  deliverEvent(targetUrl: string, event: Record<string, unknown>, opts?: SlackDeliverOptions): Promise<SlackDeliveryResult>;
  /** POSTs a signed `url_verification` request; the result carries the `challenge` to compare. */
  deliverUrlVerification(targetUrl: string, signingSecret?: string, challenge?: string): Promise<SlackDeliveryResult & { challenge: string }>;
  /** POSTs a signed, form-encoded `payload=<json>` (e.g. `events.blockActions(...)`). */
  deliverInteraction(targetUrl: string, payload: Record<string, unknown>, signingSecret?: string, opts?: SlackDeliverOptions): Promise<SlackDeliveryResult>;
  /** Sends an `events_api` envelope to the newest live socket; resolves on its ack. */
  socketSend(event: Record<string, unknown>, opts?: SlackSocketSendOptions): Promise<SlackSocketAck>;
  /** Sends an `interactive` envelope (block_actions, view_submission, …); resolves on its ack. */
  socketSendInteractive(payload: Record<string, unknown>, opts?: SlackSocketSendOptions): Promise<SlackSocketAck>;
  /** Sends a `slash_commands` envelope (`accepts_response_payload: true`); resolves on its ack. */
  socketSendSlashCommand(payload: Record<string, unknown>, opts?: SlackSocketSendOptions): Promise<SlackSocketAck>;
  /** Sends `{type:'disconnect', reason}` to every live socket; returns how many got it. */
  socketDisconnect(opts?: { reason?: 'refresh_requested' | 'warning' | 'too_many_websockets' }): number;
  /**
   * Makes the newest live socket deaf: no envelopes, no server pings, no pongs (unless `answerPings`).
   * `halfOpen` also stops reading, so even the close handshake never completes. Returns the socket id.
   */
  makeSocketDeaf(opts?: { answerPings?: boolean; halfOpen?: boolean }): number;
  /** Delays `hello` on sockets accepted from now on (0 = immediately, the default; negative = never send it). */
  setHelloDelay(ms: number): void;
  /** Sockets currently open (not yet closed, including ones in their close handshake). */
  liveSockets(): number;
  /** Every socket accepted so far (copies), in connection order; ids start at 1. */
  sockets(): SlackSocketInfo[];
  /** Live count, high-water mark, connections opened and `apps.connections.open` calls. */
  socketStats(): SlackSocketStats;
  /** Terminates sockets, drops HTTP connections and stops listening. */
  close(): Promise<void>;
}
