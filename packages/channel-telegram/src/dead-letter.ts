import { previewText } from '@switchboard/core';

/** What a dead letter records of a Telegram update: total over any JSON (the update may be malformed). */
export interface UpdateFacts {
  /** The inbox dedupe key: the update id, as `toInbound` uses it. */
  dedupeKey: string;
  chatId?: number;
  chatKind?: 'dm' | 'room';
  messageId?: number;
  senderId?: number;
  summary: string;
}

function obj(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function int(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined;
}

/** Reads the facts of an update for a dead letter. Never throws, whatever `raw` is. */
export function updateFacts(raw: unknown): UpdateFacts {
  try {
    const u = obj(raw);
    const id = int(u?.update_id);
    const kind = u ? Object.keys(u).find((k) => k !== 'update_id') : undefined;
    const m = obj(u?.message) ?? obj(obj(u?.callback_query)?.message);
    const chat = obj(m?.chat);
    const from = obj(obj(u?.message)?.from) ?? obj(obj(u?.callback_query)?.from);
    const text = typeof m?.text === 'string' ? m.text : typeof m?.caption === 'string' ? m.caption : '';
    const chatId = int(chat?.id);
    const messageId = int(m?.message_id);
    const senderId = int(from?.id);
    const facts: UpdateFacts = {
      dedupeKey: id !== undefined ? String(id) : `invalid:${previewText(JSON.stringify(raw) ?? String(raw), 60)}`,
      summary: `${kind ?? 'update'}${text ? `: ${previewText(text)}` : ''}`,
    };
    if (chatId !== undefined) {
      facts.chatId = chatId;
      facts.chatKind = chat?.type === 'private' ? 'dm' : 'room';
    }
    if (messageId !== undefined) facts.messageId = messageId;
    if (senderId !== undefined) facts.senderId = senderId;
    return facts;
  } catch {
    return { dedupeKey: 'invalid:(unreadable update)', summary: 'an unreadable update' };
  }
}
