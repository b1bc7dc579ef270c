import type { MultipartFile } from '../multipart.js';
import { badRequest } from './api-error.js';
import type { BotState, ChatState } from './bot-state.js';
import type { TgInlineKeyboardMarkup } from './types.js';

/** What a method handler gets. */
export interface MethodContext {
  bot: BotState;
  params: Record<string, unknown>;
  /** File parts of a multipart request, by part name (the targets of `attach://<name>`). */
  uploads?: ReadonlyMap<string, MultipartFile>;
  unknownChats: 'create' | 'reject';
}

/** A successful handler outcome: `{ok:true,result,description?}`. */
export interface MethodResult {
  result: unknown;
  description?: string;
}

/** A Bot API method handler; throws `TgApiError` for error envelopes. */
export type MethodHandler = (ctx: MethodContext) => MethodResult;

/** An integer parameter (number or numeric string, as form/query bodies send it). */
export function int(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return Number(v);
  return undefined;
}

/** A boolean parameter (`true`/`"true"`). */
export function bool(v: unknown): boolean {
  return v === true || v === 'true';
}

/** An object parameter, JSON-decoded when it arrives as a string (form/query bodies). */
export function obj(v: unknown): Record<string, unknown> | undefined {
  let value = v;
  if (typeof v === 'string') {
    try {
      value = JSON.parse(v);
    } catch {
      return undefined;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** An array parameter, JSON-decoded when it arrives as a string. */
export function arr(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (typeof v !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Current Unix time in seconds, as Telegram dates are. */
export function unixNow(): number {
  return Math.floor(Date.now() / 1000);
}

/** Resolves `chat_id`: a known chat, or (with `unknownChats: 'create'`) a new one for a numeric id. */
export function resolveChat(ctx: MethodContext, ref: unknown = ctx.params.chat_id): ChatState {
  if (ref === undefined || ref === null || ref === '') throw badRequest('chat_id is empty');
  const known = ctx.bot.findChat(ref);
  if (known) return known;
  const id = int(ref);
  if (id === undefined || id === 0 || ctx.unknownChats === 'reject') throw badRequest('chat not found');
  return ctx.bot.ensureChat({ id, type: id > 0 ? 'private' : 'supergroup', ...(id > 0 ? { first_name: 'User' } : { title: 'Group' }) });
}

/**
 * Validates `reply_markup`; returns the inline keyboard to attach to the message (other markup
 * kinds are accepted but not shown on the message). Callback data is 1–64 bytes.
 */
export function inlineMarkup(v: unknown): TgInlineKeyboardMarkup | undefined {
  if (v === undefined || v === null) return undefined;
  const markup = obj(v);
  if (!markup) throw badRequest("can't parse reply keyboard markup JSON object");
  if (markup.inline_keyboard === undefined) return undefined;
  const rows = markup.inline_keyboard;
  if (!Array.isArray(rows) || rows.some((r) => !Array.isArray(r)))
    throw badRequest('field "inline_keyboard" of the InlineKeyboardMarkup should be an Array of Arrays');
  for (const row of rows as unknown[][]) {
    for (const b of row) {
      const button = obj(b);
      if (!button || typeof button.text !== 'string') throw badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard");
      const data = button.callback_data;
      if (data !== undefined && (typeof data !== 'string' || Buffer.byteLength(data) < 1 || Buffer.byteLength(data) > 64)) {
        throw badRequest('BUTTON_DATA_INVALID');
      }
    }
  }
  return markup as unknown as TgInlineKeyboardMarkup;
}
