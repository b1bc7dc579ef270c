import type { TgButtonPress, TgInboundMessage, TgMentionMessage, TgReplyMessage } from './inject.js';
import type {
  FakeTelegramBotSpec,
  TgBotUser,
  TgCall,
  TgCallbackAnswer,
  TgChatAction,
  TgEvent,
  TgFault,
  TgFaultOptions,
  TgSentDocument,
  TgSentMessage,
  TgUpdate,
} from './types.js';
import type { WebhookState } from './bot-state.js';

/** A predicate over calls, or a method name (case-insensitive) as shorthand. */
export type TgCallMatcher = string | ((call: TgCall) => boolean);

/**
 * A loopback fake of the Telegram Bot API. Point grammY at it with
 * `new Bot(token, { client: { apiRoot: fake.apiRoot }, botInfo: fake.botInfo(token) })`.
 * All per-bot methods take the bot's token; records and the run log name bots by username only.
 */
export interface FakeTelegram {
  /** `http://127.0.0.1:PORT`, no trailing slash (grammY rejects one). */
  readonly apiRoot: string;
  readonly port: number;
  /** Every API call in arrival order; `response` is filled in when answered. */
  readonly calls: readonly TgCall[];
  /** Polling and injection events in order. */
  readonly events: readonly TgEvent[];
  /** The `getMe` user of a bot; pass it as grammY's `botInfo` to skip `getMe`. */
  botInfo(token: string): TgBotUser;
  /** Registers another bot token. */
  addBot(spec: FakeTelegramBotSpec): TgBotUser;
  /** Queues a `message` update from a user (new `update_id`, the chat's next `message_id`) and returns it. */
  sendUserMessage(token: string, msg: TgInboundMessage): TgUpdate;
  /** Like `sendUserMessage` with the text prefixed by `@botusername` and a `mention` entity. */
  mentionBot(token: string, msg: TgMentionMessage): TgUpdate;
  /** A user message replying to the bot message `to` (in its chat). */
  replyToBot(token: string, msg: TgReplyMessage): TgUpdate;
  /** Queues a `callback_query` for an inline button currently shown on a bot message. */
  pressButton(token: string, press: TgButtonPress): TgUpdate;
  /** Queues an arbitrary update payload (e.g. `{ edited_message }`); the fake assigns `update_id`. */
  injectUpdate(token: string, payload: Record<string, unknown>): TgUpdate;
  /** Updates queued and not yet confirmed by a later `offset`. */
  pendingUpdates(token: string): TgUpdate[];
  /**
   * Makes upcoming calls of `method` (case-insensitive; `'*'` for any) fail with `fault`:
   * `{status:429,retryAfter}`, `{status:5xx}`, `{status:409}`, `{status:400,description}`,
   * `{rawBody}`, `{drop:true}` or `{envelope}` (this exact JSON body, e.g. `{ok:false}` with no
   * description). Faults for a method are used in the order added.
   */
  failNext(method: string, fault: TgFault, opts?: TgFaultOptions): void;
  /**
   * From now on the bot's current pending `getUpdates` (or, if none is pending, the next one)
   * is never answered, not even after its `timeout`; later requests are served normally.
   */
  stallPolling(token: string): void;
  /** Resolves once a poll of the bot (or of any bot) is stalled; events with `seq > since` (default: all) count. */
  waitForStalledPoll(token?: string, timeoutMs?: number, since?: number): Promise<TgEvent>;
  /** Resolves once the client closed the socket of a stalled poll; events with `seq > since` (default: all) count. */
  waitForClosedStalledPoll(token?: string, timeoutMs?: number, since?: number): Promise<TgEvent>;
  /** Resolves with the first event matching, among events with `seq > since` (default 0: all so far and later). */
  waitForEvent(match: (e: TgEvent) => boolean, timeoutMs?: number, since?: number): Promise<TgEvent>;
  /**
   * Resolves with the first call matching, among calls with `seq > since` (default 0: all calls
   * so far and later ones). Checked again on every arrival and every answer.
   */
  waitFor(match: TgCallMatcher, timeoutMs?: number, since?: number): Promise<TgCall>;
  /** Resolves once a call matching has been answered; returns it. */
  waitForAnswered(match: TgCallMatcher, timeoutMs?: number, since?: number): Promise<TgCall>;
  /** The bot's messages in a chat as the chat shows them now (deleted ones only with `includeDeleted`). */
  sent(token: string, chatId: number, opts?: { includeDeleted?: boolean }): TgSentMessage[];
  /** Documents the bot sent (`sendDocument`), with the uploaded bytes, optionally for one chat; oldest chat first. */
  documents(token: string, chatId?: number): TgSentDocument[];
  /** `sendChatAction` calls that succeeded, optionally for one chat. */
  chatActions(token: string, chatId?: number): TgChatAction[];
  /** `answerCallbackQuery` calls that succeeded. */
  callbackAnswers(token: string): TgCallbackAnswer[];
  /** Commands set by `setMyCommands` for a scope (default scope) and language. */
  commands(token: string, scope?: Record<string, unknown>, languageCode?: string): unknown[] | undefined;
  /** The webhook currently set, if any. */
  webhook(token: string): WebhookState | undefined;
  /** Drops every connection (stalled polls included) and stops listening. */
  close(): Promise<void>;
}
