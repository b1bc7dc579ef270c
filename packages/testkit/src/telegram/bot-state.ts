import type { FakeTelegramBotSpec, TgBotUser, TgCallbackAnswer, TgChat, TgChatAction, TgMessage, TgMessageVersion, TgUpdate, TgUser } from './types.js';

/** A message in a chat as the fake keeps it. */
export interface StoredMessage {
  message: TgMessage;
  fromBot: boolean;
  rawText?: string;
  parseMode?: string;
  linkPreviewOptions?: Record<string, unknown>;
  replyParameters?: Record<string, unknown>;
  history: TgMessageVersion[];
  deleted: boolean;
}

/** A chat with its per-chat `message_id` counter. */
export interface ChatState {
  chat: TgChat;
  nextMessageId: number;
  messages: Map<number, StoredMessage>;
}

/** A file a user sent, retrievable with `getFile` and `GET /file/bot<token>/<file_path>`. */
export interface StoredFile {
  file_id: string;
  file_unique_id: string;
  file_size?: number;
  file_path: string;
  content?: Buffer;
}

/** A registered webhook. */
export interface WebhookState {
  url: string;
  secret_token?: string;
  allowed_updates?: string[];
  max_connections?: number;
}

/** A `getUpdates` request the fake has not answered yet. */
export interface PendingPoll {
  seq: number;
  limit: number;
  stalled: boolean;
  answered: boolean;
  timer?: NodeJS.Timeout;
  answer(status: number, body: unknown): void;
  /** True once the client's socket is gone (its close event may not have fired yet). */
  gone(): boolean;
}

/** Update types delivered when `allowed_updates` is unset or `[]` (Bot API default). */
const NOT_BY_DEFAULT = new Set(['chat_member', 'message_reaction', 'message_reaction_count']);

/** The type of an update: its one field other than `update_id`. */
export function updateType(u: TgUpdate): string {
  return Object.keys(u).find((k) => k !== 'update_id') ?? 'unknown';
}

/** Everything the fake keeps for one bot token. */
export class BotState {
  readonly user: TgBotUser;
  readonly chats = new Map<number, ChatState>();
  /** Updates not yet confirmed (via a later `offset`), oldest first. */
  readonly updates: TgUpdate[] = [];
  readonly polls = new Set<PendingPoll>();
  readonly commands = new Map<string, unknown[]>();
  readonly files = new Map<string, StoredFile>();
  readonly callbackQueries = new Map<string, { answered: boolean }>();
  readonly chatActions: TgChatAction[] = [];
  readonly callbackAnswers: TgCallbackAnswer[] = [];
  stallNext = false;
  allowedUpdates: string[] | undefined;
  webhook: WebhookState | undefined;
  private nextUpdateId = 1;
  private fileSeq = 0;

  constructor(spec: FakeTelegramBotSpec) {
    const id = spec.id ?? Number(spec.token.split(':')[0]);
    if (!Number.isSafeInteger(id) || id <= 0) throw new Error('fake-telegram: bot spec needs an id (or a token starting with "<digits>:")');
    this.user = {
      id,
      is_bot: true,
      first_name: spec.first_name ?? 'Test Bot',
      username: spec.username ?? `test_${id}_bot`,
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false,
      has_topics_enabled: false,
      allows_users_to_create_topics: false,
      can_manage_bots: false,
      supports_join_request_queries: false,
    };
  }

  /** The bot as a message sender (`from` of its messages). */
  get asSender(): TgUser {
    return { id: this.user.id, is_bot: true, first_name: this.user.first_name, username: this.user.username };
  }

  /** The chat with this id, creating it (or merging new fields into it) from `chat`. */
  ensureChat(chat: TgChat): ChatState {
    const known = this.chats.get(chat.id);
    if (known) {
      Object.assign(known.chat, chat);
      return known;
    }
    const state: ChatState = { chat: { ...chat }, nextMessageId: 1, messages: new Map() };
    this.chats.set(chat.id, state);
    return state;
  }

  /** Looks a chat up by numeric id (or numeric string) or by `@username`. */
  findChat(ref: unknown): ChatState | undefined {
    if (typeof ref === 'number') return this.chats.get(ref);
    if (typeof ref !== 'string') return undefined;
    if (/^-?\d+$/.test(ref)) return this.chats.get(Number(ref));
    const name = ref.replace(/^@/, '').toLowerCase();
    return [...this.chats.values()].find((c) => c.chat.username?.toLowerCase() === name);
  }

  /** Stores a new message with the chat's next `message_id`. */
  addMessage(chat: ChatState, build: (messageId: number) => TgMessage, extra: Omit<StoredMessage, 'message' | 'history' | 'deleted'>): StoredMessage {
    const message = build(chat.nextMessageId++);
    const version: TgMessageVersion = { at: new Date() };
    if (message.text !== undefined) version.text = message.text;
    if (message.entities) version.entities = message.entities;
    if (message.reply_markup) version.reply_markup = message.reply_markup;
    const stored: StoredMessage = { ...extra, message, history: [version], deleted: false };
    chat.messages.set(message.message_id, stored);
    return stored;
  }

  /** A message by chat reference and id (deleted ones included). */
  findMessage(chatRef: unknown, messageId: unknown): StoredMessage | undefined {
    const id = typeof messageId === 'string' ? Number(messageId) : messageId;
    return typeof id === 'number' ? this.findChat(chatRef)?.messages.get(id) : undefined;
  }

  /** Queues an update with the next `update_id`. */
  queue(payload: Record<string, unknown>): TgUpdate {
    const update = { update_id: this.nextUpdateId++, ...payload } as TgUpdate;
    this.updates.push(update);
    return update;
  }

  /** Applies a `getUpdates` offset: positive confirms (drops) lower ids, negative keeps the last `-offset`. */
  confirm(offset: number): void {
    if (offset < 0) this.updates.splice(0, Math.max(0, this.updates.length + offset));
    else while (this.updates[0] && this.updates[0].update_id < offset) this.updates.shift();
  }

  /** Drops every queued update. */
  dropPending(): void {
    this.updates.length = 0;
  }

  /** The first `limit` deliverable updates; ones `allowed_updates` excludes are discarded. */
  take(limit: number): TgUpdate[] {
    const allowed = this.allowedUpdates;
    const wanted = (u: TgUpdate): boolean => (allowed ? allowed.includes(updateType(u)) : !NOT_BY_DEFAULT.has(updateType(u)));
    for (let i = this.updates.length - 1; i >= 0; i--) {
      const u = this.updates[i];
      if (u && !wanted(u)) this.updates.splice(i, 1);
    }
    return this.updates.slice(0, limit);
  }

  /** Registers a file a user sent. */
  addFile(kind: 'photos' | 'documents', ext: string, size: number | undefined, content: string | Uint8Array | undefined): StoredFile {
    const n = ++this.fileSeq;
    const bytes = content === undefined ? undefined : Buffer.from(content);
    const file: StoredFile = {
      file_id: `file_test_${this.user.id}_${n}`,
      file_unique_id: `uniq_test_${n}`,
      file_path: `${kind}/file_${n}.${ext}`,
    };
    const fileSize = size ?? bytes?.length;
    if (fileSize !== undefined) file.file_size = fileSize;
    if (bytes) file.content = bytes;
    this.files.set(file.file_id, file);
    return file;
  }
}
