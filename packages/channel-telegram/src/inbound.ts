import type { ConversationRef, InboundMessage } from '@switchboard/core';
import type { TgMessage, TgUser } from './update-schema.js';

/** The bot as the adapter knows it after getMe. */
export interface BotIdentity {
  id: number;
  username: string;
}

const MEDIA_KEYS = ['photo', 'document', 'video', 'audio', 'voice', 'animation', 'video_note', 'sticker'] as const;
const QUOTE_LIMIT = 500;

/** A person's name as Telegram shows it. */
export function displayName(u: TgUser): string {
  return [u.first_name, u.last_name].filter(Boolean).join(' ') || (u.username ? `@${u.username}` : String(u.id));
}

/** The conversation a message belongs to (a forum topic is its own thread). */
export function conversationOf(account: string, m: Pick<TgMessage, 'chat' | 'message_thread_id' | 'is_topic_message'>): ConversationRef {
  const kind = m.chat.type === 'private' ? 'dm' : 'room';
  const topic = m.chat.is_forum === true && m.message_thread_id !== undefined;
  return { channel: 'telegram', account, id: String(m.chat.id), kind, ...(topic ? { thread: String(m.message_thread_id) } : {}) };
}

/** The largest declared size of the message's media, in bytes (0 without media). */
export function mediaBytes(m: TgMessage): number {
  let max = 0;
  for (const key of MEDIA_KEYS) {
    const v = m[key];
    const files = Array.isArray(v) ? v : v ? [v] : [];
    for (const f of files) max = Math.max(max, f.file_size ?? 0);
  }
  return max;
}

/** What kind of media the message carries, if any (for a text stand-in). */
export function mediaKind(m: TgMessage): string | undefined {
  return MEDIA_KEYS.find((k) => m[k] !== undefined)?.replace('_', ' ');
}

/** A bot command at the start of the message: `/name[@bot] args`. */
export function parseCommand(m: TgMessage): { name: string; target?: string; args: string } | undefined {
  const text = m.text;
  const first = m.entities?.[0];
  if (!text || !first || first.type !== 'bot_command' || first.offset !== 0) return undefined;
  const raw = text.slice(1, first.length);
  const [name = '', target] = raw.split('@');
  return { name: name.toLowerCase(), ...(target ? { target } : {}), args: text.slice(first.length).trim() };
}

/**
 * Whether a group message addresses the bot: an @mention (or text mention) of it, a command
 * aimed at it, a reply to one of its messages, or a configured pattern.
 */
export function isMentioned(m: TgMessage, bot: BotIdentity, patterns: readonly Pick<RegExp, 'test'>[]): boolean {
  if (m.chat.type === 'private') return true;
  const text = m.text ?? m.caption ?? '';
  const me = `@${bot.username}`.toLowerCase();
  for (const e of m.entities ?? m.caption_entities ?? []) {
    const piece = text.slice(e.offset, e.offset + e.length).toLowerCase();
    if (e.type === 'mention' && piece === me) return true;
    if (e.type === 'text_mention' && e.user?.id === bot.id) return true;
    if (e.type === 'bot_command' && piece.endsWith(me)) return true;
  }
  if (m.reply_to_message?.from?.id === bot.id) return true;
  return patterns.some((p) => p.test(text));
}

/** The text the model sees: text or caption, a media stand-in, and the quoted bot message on a reply. */
export function inboundText(m: TgMessage, bot: BotIdentity): string {
  let text = m.text ?? m.caption ?? '';
  const media = mediaKind(m);
  if (media) text = text ? `[${media} attached]\n${text}` : `[The user sent a ${media} without a caption]`;
  const quoted = m.reply_to_message;
  if (quoted && quoted.from?.id === bot.id) {
    const q = quoted.text ?? quoted.caption ?? '';
    if (q) text = `[In reply to your message: "${q.length > QUOTE_LIMIT ? `${q.slice(0, QUOTE_LIMIT)}…` : q}"]\n${text}`;
  }
  return text;
}

/** Maps one Telegram message to the gateway's InboundMessage (dedupe key = update_id). */
export function toInbound(
  updateId: number,
  m: TgMessage & { from: TgUser },
  account: string,
  bot: BotIdentity,
  patterns: readonly Pick<RegExp, 'test'>[],
): InboundMessage {
  const conversation = conversationOf(account, m);
  return {
    dedupeKey: String(updateId),
    channel: 'telegram',
    account,
    conversation,
    sender: { identity: `telegram:${m.from.id}`, displayName: displayName(m.from), isBot: m.from.is_bot },
    kind: conversation.kind,
    mentioned: isMentioned(m, bot, patterns),
    text: inboundText(m, bot),
    platformId: String(m.message_id),
    receivedAt: new Date(),
  };
}
