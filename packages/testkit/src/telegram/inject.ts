import type { BotState } from './bot-state.js';
import { detectEntities } from './format.js';
import { asReplied, MAX_MESSAGE_LENGTH } from './message-methods.js';
import { unixNow } from './params.js';
import type { TgCallbackQuery, TgChat, TgMessage, TgMessageEntity, TgPhotoSize, TgUser } from './types.js';

/** A file attached to an injected message; `content` is served by `getFile` + download. */
export interface TgInboundFile {
  file_size?: number;
  content?: string | Uint8Array;
}

/** A message a user sends to the bot (see `FakeTelegram.sendUserMessage`). */
export interface TgInboundMessage {
  chat: TgChat;
  from: TgUser;
  text?: string;
  /** Default: bot commands, @mentions and URLs detected in `text`. */
  entities?: TgMessageEntity[];
  caption?: string;
  caption_entities?: TgMessageEntity[];
  /** The message replied to; one the fake knows (by `message_id`) is filled in from its current state. */
  reply_to_message?: TgMessage | { message_id: number };
  photo?: Array<TgInboundFile & { width?: number; height?: number }>;
  document?: TgInboundFile & { file_name?: string; mime_type?: string };
  message_thread_id?: number;
  date?: number;
}

/** A message that @-mentions the bot: the text becomes `@botusername <text>`. */
export type TgMentionMessage = Omit<TgInboundMessage, 'entities' | 'text'> & { text: string };

/** A reply to one of the bot's messages (same chat as `to`). */
export type TgReplyMessage = Omit<TgInboundMessage, 'chat' | 'reply_to_message'> & { to: Pick<TgMessage, 'message_id' | 'chat'> };

/** A user pressing an inline button of a message the bot sent. */
export interface TgButtonPress {
  from: TgUser;
  message: Pick<TgMessage, 'message_id' | 'chat'>;
  data: string;
  /** Skip the check that the message currently shows a button with this `callback_data`. */
  unchecked?: boolean;
}

/** Builds and stores a user's message in its chat (with the chat's next `message_id`). */
export function storeUserMessage(bot: BotState, msg: TgInboundMessage): TgMessage {
  const hasContent = msg.text !== undefined || msg.photo !== undefined || msg.document !== undefined || msg.caption !== undefined;
  if (!hasContent) throw new Error('fake-telegram: an injected message needs text, a caption, a photo or a document');
  if ((msg.text?.length ?? 0) > MAX_MESSAGE_LENGTH) throw new Error('fake-telegram: users cannot send text over 4096 UTF-16 code units either');
  const chat = bot.ensureChat(msg.chat);
  let replyTo: TgMessage | undefined;
  if (msg.reply_to_message) {
    const known = chat.messages.get(msg.reply_to_message.message_id);
    replyTo = asReplied(known?.message ?? (msg.reply_to_message as TgMessage));
  }
  const photo = msg.photo?.map((p, i): TgPhotoSize => {
    const f = bot.addFile('photos', 'jpg', p.file_size, p.content);
    const side = p.width ?? 90 * (i + 1);
    return {
      file_id: f.file_id,
      file_unique_id: f.file_unique_id,
      width: side,
      height: p.height ?? side,
      ...(f.file_size !== undefined ? { file_size: f.file_size } : {}),
    };
  });
  const doc = msg.document;
  const docFile = doc ? bot.addFile('documents', (doc.file_name ?? 'file.bin').split('.').pop() ?? 'bin', doc.file_size, doc.content) : undefined;
  const stored = bot.addMessage(
    chat,
    (id) => ({
      message_id: id,
      ...(msg.message_thread_id !== undefined ? { message_thread_id: msg.message_thread_id } : {}),
      from: msg.from,
      chat: { ...chat.chat },
      date: msg.date ?? unixNow(),
      ...(replyTo ? { reply_to_message: replyTo } : {}),
      ...(msg.text !== undefined ? { text: msg.text } : {}),
      ...(msg.text !== undefined ? nonEmpty('entities', msg.entities ?? detectEntities(msg.text)) : {}),
      ...(msg.caption !== undefined ? { caption: msg.caption } : {}),
      ...(msg.caption !== undefined ? nonEmpty('caption_entities', msg.caption_entities ?? detectEntities(msg.caption)) : {}),
      ...(photo ? { photo } : {}),
      ...(doc && docFile
        ? {
            document: {
              file_id: docFile.file_id,
              file_unique_id: docFile.file_unique_id,
              ...(doc.file_name !== undefined ? { file_name: doc.file_name } : {}),
              ...(doc.mime_type !== undefined ? { mime_type: doc.mime_type } : {}),
              ...(docFile.file_size !== undefined ? { file_size: docFile.file_size } : {}),
            },
          }
        : {}),
    }),
    { fromBot: false },
  );
  return stored.message;
}

function nonEmpty<K extends string>(key: K, entities: TgMessageEntity[]): Partial<Record<K, TgMessageEntity[]>> {
  return entities.length > 0 ? ({ [key]: entities } as Record<K, TgMessageEntity[]>) : {};
}

/** The fields of a message that mentions the bot with a `mention` entity at offset 0. */
export function mentionFields(bot: BotState, msg: TgMentionMessage): TgInboundMessage {
  const mention = `@${bot.user.username}`;
  const text = `${mention} ${msg.text}`;
  const rest = detectEntities(text).filter((e) => e.offset > 0);
  return { ...msg, text, entities: [{ type: 'mention', offset: 0, length: mention.length }, ...rest] };
}

/** Builds a `callback_query` for a button press, checking the button exists unless `unchecked`. */
export function buildCallbackQuery(bot: BotState, press: TgButtonPress, id: string): TgCallbackQuery {
  const stored = bot.findMessage(press.message.chat.id, press.message.message_id);
  if (!stored || stored.deleted || !stored.fromBot)
    throw new Error(`fake-telegram: no bot message ${press.message.message_id} in chat ${press.message.chat.id}`);
  const buttons = stored.message.reply_markup?.inline_keyboard.flat() ?? [];
  if (!press.unchecked && !buttons.some((b) => b.callback_data === press.data)) {
    throw new Error(`fake-telegram: message ${press.message.message_id} shows no button with callback_data ${JSON.stringify(press.data)}`);
  }
  bot.callbackQueries.set(id, { answered: false });
  return { id, from: press.from, message: structuredClone(stored.message), chat_instance: `chat_instance_${stored.message.chat.id}`, data: press.data };
}
