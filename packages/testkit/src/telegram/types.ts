/** Wire shapes (a subset of the Telegram Bot API) and record types of the fake Telegram server. */

/** A Telegram user (`User`). */
export interface TgUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
  language_code?: string;
}

/** What `getMe` answers; structurally a grammY `UserFromGetMe`, so it can be passed as `botInfo`. */
export interface TgBotUser extends TgUser {
  is_bot: true;
  username: string;
  can_join_groups: boolean;
  can_read_all_group_messages: boolean;
  supports_inline_queries: boolean;
  can_connect_to_business: boolean;
  has_main_web_app: boolean;
  has_topics_enabled: boolean;
  allows_users_to_create_topics: boolean;
  can_manage_bots: boolean;
  supports_join_request_queries: boolean;
}

/** A chat (`Chat`). */
export interface TgChat {
  id: number;
  type: 'private' | 'group' | 'supergroup' | 'channel';
  title?: string;
  username?: string;
  first_name?: string;
  last_name?: string;
  is_forum?: true;
}

/** A `MessageEntity`; `offset`/`length` are in UTF-16 code units. */
export interface TgMessageEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  user?: TgUser;
  language?: string;
  custom_emoji_id?: string;
}

/** A `PhotoSize`. */
export interface TgPhotoSize {
  file_id: string;
  file_unique_id: string;
  width: number;
  height: number;
  file_size?: number;
}

/** A `Document`. */
export interface TgDocument {
  file_id: string;
  file_unique_id: string;
  file_name?: string;
  mime_type?: string;
  file_size?: number;
}

/** A document the bot sent, as {@link FakeTelegram.documents} lists it. */
export interface TgSentDocument {
  chat_id: number;
  message_id: number;
  message_thread_id?: number;
  document: TgDocument;
  caption?: string;
  /** The bytes uploaded. */
  content: Buffer;
}

/** A `Message` (the fields this fake produces). */
export interface TgMessage {
  message_id: number;
  message_thread_id?: number;
  from?: TgUser;
  chat: TgChat;
  date: number;
  edit_date?: number;
  reply_to_message?: TgMessage;
  text?: string;
  entities?: TgMessageEntity[];
  caption?: string;
  caption_entities?: TgMessageEntity[];
  photo?: TgPhotoSize[];
  document?: TgDocument;
  link_preview_options?: Record<string, unknown>;
  reply_markup?: TgInlineKeyboardMarkup;
}

/** An `InlineKeyboardMarkup` (only inline keyboards are attached to a sent `Message`). */
export interface TgInlineKeyboardMarkup {
  inline_keyboard: Array<Array<{ text: string; callback_data?: string; url?: string; [k: string]: unknown }>>;
}

/** A `CallbackQuery`. */
export interface TgCallbackQuery {
  id: string;
  from: TgUser;
  message?: TgMessage;
  chat_instance: string;
  data?: string;
}

/** An `Update`; exactly one payload field is set. */
export interface TgUpdate {
  update_id: number;
  message?: TgMessage;
  edited_message?: TgMessage;
  callback_query?: TgCallbackQuery;
  [type: string]: unknown;
}

/** A bot the fake knows; `id` defaults to the digits before `:` in the token. */
export interface FakeTelegramBotSpec {
  token: string;
  id?: number;
  username?: string;
  first_name?: string;
}

/** Options of {@link startFakeTelegram}. */
export interface FakeTelegramOptions {
  /** The bots (tokens) the fake accepts; default one bot, {@link DEFAULT_TELEGRAM_TOKEN}. */
  bots?: FakeTelegramBotSpec[];
  /** What sending to a chat the bot never saw does: `'create'` (default) or `'reject'` (400 chat not found). */
  unknownChats?: 'create' | 'reject';
  /** Run-log source; default `fake-telegram`. */
  logSource?: string;
}

/** An injected failure for one call: an error envelope, a non-JSON body, or a dropped socket. */
export interface TgFault {
  /** HTTP status and `error_code`; default 500. */
  status?: number;
  /** Default: the usual Telegram description for `status`. */
  description?: string;
  /** `parameters.retry_after` (seconds); for 429 it defaults to 1. */
  retryAfter?: number;
  /** `parameters.migrate_to_chat_id`. */
  migrateToChatId?: number;
  /** Answer this non-JSON text instead of an envelope (grammY then throws `HttpError`). */
  rawBody?: string;
  /** Destroy the socket without answering (grammY then throws `HttpError`). */
  drop?: boolean;
  /**
   * Answer exactly this JSON body (with `status`, default 400), e.g. `{ ok: false }` with no
   * `description` or `error_code`, as independent Bot API servers sometimes do.
   */
  envelope?: Record<string, unknown>;
}

/** Which calls a fault applies to. */
export interface TgFaultOptions {
  /** How many consecutive matching calls fail; default 1. */
  times?: number;
  /** How many matching calls pass before the first failure; default 0. */
  skip?: number;
  /** Only calls by this bot; default any bot. */
  token?: string;
}

/** A Bot API envelope as sent on the wire. */
export interface TgEnvelope {
  ok: boolean;
  result?: unknown;
  description?: string;
  error_code?: number;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

/** One API call received; `response` is set once answered (a stalled poll never is). */
export interface TgCall {
  seq: number;
  /** The bot's username (never its token); undefined for an unknown token. */
  bot: string | undefined;
  method: string;
  params: Record<string, unknown>;
  at: Date;
  status?: number;
  response?: TgEnvelope;
}

/** One version of a message's visible content. */
export interface TgMessageVersion {
  text?: string;
  entities?: TgMessageEntity[];
  reply_markup?: TgInlineKeyboardMarkup;
  at: Date;
}

/** A message the bot sent, as the chat shows it now. */
export interface TgSentMessage {
  message_id: number;
  chat_id: number;
  /** Visible text (markup parsed away); see `raw_text` for what the bot sent. */
  text: string | undefined;
  raw_text: string | undefined;
  entities?: TgMessageEntity[];
  parse_mode?: string;
  link_preview_options?: Record<string, unknown>;
  reply_markup?: TgInlineKeyboardMarkup;
  reply_parameters?: Record<string, unknown>;
  /** Every version, oldest first; the last is the current one. */
  history: TgMessageVersion[];
  deleted: boolean;
  /** The current wire `Message`. */
  message: TgMessage;
}

/** A `sendChatAction` the bot made. */
export interface TgChatAction {
  chat_id: number;
  action: string;
  at: Date;
}

/** An `answerCallbackQuery` the bot made. */
export interface TgCallbackAnswer {
  callback_query_id: string;
  text?: string;
  show_alert?: boolean;
  url?: string;
  cache_time?: number;
  at: Date;
}

/** Something the fake observed about polling or injected traffic. */
export interface TgEvent {
  /** 1-based position in `FakeTelegram.events`. */
  seq: number;
  type: 'poll-started' | 'poll-answered' | 'poll-closed' | 'poll-conflict' | 'poll-stalled' | 'stalled-poll-closed' | 'update-queued' | 'fault-injected';
  /** The bot's username. */
  bot: string;
  at: Date;
  /** The `seq` of the call concerned, when there is one. */
  call?: number;
  detail?: string;
}
