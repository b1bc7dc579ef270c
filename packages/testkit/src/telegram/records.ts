import type { StoredMessage } from './bot-state.js';
import type { TgCallMatcher } from './fake-telegram-api.js';
import type { TgCall, TgSentMessage } from './types.js';

/** A call matcher as a predicate (a string matches the method name, case-insensitively). */
export function toPredicate(match: TgCallMatcher): (c: TgCall) => boolean {
  return typeof match === 'string' ? (c) => c.method.toLowerCase() === match.toLowerCase() : match;
}

/** How a matcher reads in a timeout message. */
export function describeMatcher(match: TgCallMatcher): string {
  return typeof match === 'string' ? match : 'the predicate';
}

/** A stored bot message as the `sent()` record (a deep copy). */
export function toSent(m: StoredMessage): TgSentMessage {
  const msg = structuredClone(m.message);
  const sent: TgSentMessage = {
    message_id: msg.message_id,
    chat_id: msg.chat.id,
    text: msg.text,
    raw_text: m.rawText,
    history: structuredClone(m.history),
    deleted: m.deleted,
    message: msg,
  };
  if (msg.entities) sent.entities = msg.entities;
  if (m.parseMode !== undefined) sent.parse_mode = m.parseMode;
  if (m.linkPreviewOptions) sent.link_preview_options = m.linkPreviewOptions;
  if (msg.reply_markup) sent.reply_markup = msg.reply_markup;
  if (m.replyParameters) sent.reply_parameters = m.replyParameters;
  return sent;
}
