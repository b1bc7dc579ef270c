import { badRequest, NOT_MODIFIED } from './api-error.js';
import type { StoredMessage } from './bot-state.js';
import { formatMessageText } from './format.js';
import { bool, inlineMarkup, int, obj, resolveChat, unixNow, type MethodContext, type MethodHandler, type MethodResult } from './params.js';
import type { TgMessage, TgMessageEntity } from './types.js';

/** Telegram's limit on message text after entity parsing, in UTF-16 code units. */
export const MAX_MESSAGE_LENGTH = 4096;

/** A message as it appears inside `reply_to_message` (no further nesting). */
export function asReplied(m: TgMessage): TgMessage {
  const copy: TgMessage = { ...m };
  delete copy.reply_to_message;
  return copy;
}

function parseText(ctx: MethodContext): { text: string; entities: TgMessageEntity[] } {
  const raw = ctx.params.text;
  if (raw === undefined || raw === null || raw === '') throw badRequest('message text is empty');
  const parsed = formatMessageText(String(raw), ctx.params.parse_mode, ctx.params.entities);
  if ('error' in parsed) throw badRequest(parsed.error);
  if (parsed.text.length === 0) throw badRequest('message text is empty');
  if (parsed.text.length > MAX_MESSAGE_LENGTH) throw badRequest('message is too long');
  return parsed;
}

function linkPreview(params: Record<string, unknown>): Record<string, unknown> | undefined {
  return obj(params.link_preview_options) ?? (bool(params.disable_web_page_preview) ? { is_disabled: true } : undefined);
}

const sendMessage: MethodHandler = (ctx) => {
  const chat = resolveChat(ctx);
  const { text, entities } = parseText(ctx);
  const markup = inlineMarkup(ctx.params.reply_markup);
  const legacyReply = int(ctx.params.reply_to_message_id);
  const replyParameters = obj(ctx.params.reply_parameters) ?? (legacyReply !== undefined ? { message_id: legacyReply } : undefined);
  let replyTo: TgMessage | undefined;
  if (replyParameters) {
    const target = ctx.bot.findMessage(replyParameters.chat_id ?? chat.chat.id, replyParameters.message_id);
    if (target && !target.deleted) replyTo = asReplied(target.message);
    else if (!bool(replyParameters.allow_sending_without_reply) && !bool(ctx.params.allow_sending_without_reply)) {
      throw badRequest('message to be replied not found');
    }
  }
  const preview = linkPreview(ctx.params);
  const thread = int(ctx.params.message_thread_id);
  const stored = ctx.bot.addMessage(
    chat,
    (id) => ({
      message_id: id,
      ...(thread !== undefined ? { message_thread_id: thread } : {}),
      from: ctx.bot.asSender,
      chat: { ...chat.chat },
      date: unixNow(),
      ...(replyTo ? { reply_to_message: replyTo } : {}),
      text,
      ...(entities.length > 0 ? { entities } : {}),
      ...(preview ? { link_preview_options: preview } : {}),
      ...(markup ? { reply_markup: markup } : {}),
    }),
    {
      fromBot: true,
      rawText: String(ctx.params.text),
      ...(typeof ctx.params.parse_mode === 'string' ? { parseMode: ctx.params.parse_mode } : {}),
      ...(preview ? { linkPreviewOptions: preview } : {}),
      ...(replyParameters ? { replyParameters } : {}),
    },
  );
  return { result: stored.message };
};

function editTarget(ctx: MethodContext, notFound: string): StoredMessage {
  if (ctx.params.inline_message_id !== undefined) throw badRequest(notFound);
  if (ctx.params.message_id === undefined) throw badRequest('message identifier is not specified');
  resolveChat(ctx);
  const stored = ctx.bot.findMessage(ctx.params.chat_id, ctx.params.message_id);
  if (!stored || stored.deleted) throw badRequest(notFound);
  return stored;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

function applyEdit(stored: StoredMessage, next: Pick<TgMessage, 'text' | 'entities' | 'reply_markup'>): MethodResult {
  const m = stored.message;
  const unchanged = same(m.text, next.text) && same(m.entities ?? [], next.entities ?? []) && same(m.reply_markup, next.reply_markup);
  if (unchanged) throw badRequest(NOT_MODIFIED);
  if (next.text !== undefined) m.text = next.text;
  if (next.entities && next.entities.length > 0) m.entities = next.entities;
  else delete m.entities;
  if (next.reply_markup) m.reply_markup = next.reply_markup;
  else delete m.reply_markup;
  m.edit_date = unixNow();
  stored.history.push({
    at: new Date(),
    ...(m.text !== undefined ? { text: m.text } : {}),
    ...(m.entities ? { entities: m.entities } : {}),
    ...(m.reply_markup ? { reply_markup: m.reply_markup } : {}),
  });
  return { result: m };
}

const editMessageText: MethodHandler = (ctx) => {
  const stored = editTarget(ctx, 'message to edit not found');
  if (!stored.fromBot) throw badRequest("message can't be edited");
  if (stored.message.text === undefined) throw badRequest('there is no text in the message to edit');
  const { text, entities } = parseText(ctx);
  const result = applyEdit(stored, { text, entities, ...withMarkup(ctx.params.reply_markup) });
  stored.rawText = String(ctx.params.text);
  if (typeof ctx.params.parse_mode === 'string') stored.parseMode = ctx.params.parse_mode;
  else delete stored.parseMode;
  const preview = linkPreview(ctx.params);
  if (preview) stored.message.link_preview_options = stored.linkPreviewOptions = preview;
  return result;
};

function withMarkup(v: unknown): Pick<TgMessage, 'reply_markup'> {
  const markup = inlineMarkup(v);
  return markup ? { reply_markup: markup } : {};
}

const editMessageReplyMarkup: MethodHandler = (ctx) => {
  const stored = editTarget(ctx, 'message to edit not found');
  if (!stored.fromBot) throw badRequest("message can't be edited");
  const m = stored.message;
  return applyEdit(stored, {
    ...(m.text !== undefined ? { text: m.text } : {}),
    ...(m.entities ? { entities: m.entities } : {}),
    ...withMarkup(ctx.params.reply_markup),
  });
};

const deleteMessage: MethodHandler = (ctx) => {
  const chat = resolveChat(ctx);
  const stored = ctx.bot.findMessage(chat.chat.id, ctx.params.message_id);
  if (!stored || stored.deleted) throw badRequest('message to delete not found');
  if (!stored.fromBot && chat.chat.type !== 'private') throw badRequest("message can't be deleted");
  stored.deleted = true;
  return { result: true };
};

/** Handlers of the message methods, keyed by lower-cased method name. */
export const MESSAGE_METHODS: Record<string, MethodHandler> = {
  sendmessage: sendMessage,
  editmessagetext: editMessageText,
  editmessagereplymarkup: editMessageReplyMarkup,
  deletemessage: deleteMessage,
};
