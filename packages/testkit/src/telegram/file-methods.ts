import path from 'node:path';
import { badRequest } from './api-error.js';
import { int, resolveChat, unixNow, type MethodHandler } from './params.js';
import type { TgDocument } from './types.js';

/** Telegram's caption limit after entity parsing. */
const MAX_CAPTION = 1024;
/** Bots may upload documents up to 50 MB. */
const MAX_UPLOAD = 50 * 1024 * 1024;

const TYPES: Record<string, string> = { '.pdf': 'application/pdf', '.txt': 'text/plain', '.png': 'image/png', '.jpg': 'image/jpeg', '.csv': 'text/csv' };

/**
 * `sendDocument` as the Bot API takes it: `document` is `attach://<part>` naming a multipart file
 * part (an upload), or the `file_id` of a file the bot can already see. The sent message carries
 * a `document` (`file_id`, `file_name`, `mime_type`, `file_size`); the upload's bytes are served
 * by `getFile` + download like a user's file.
 */
const sendDocument: MethodHandler = (ctx) => {
  const chat = resolveChat(ctx);
  const ref = ctx.params.document;
  if (typeof ref !== 'string' || ref === '') throw badRequest('there is no document in the request');
  let document: TgDocument;
  if (ref.startsWith('attach://')) {
    const upload = ctx.uploads?.get(ref.slice('attach://'.length));
    if (!upload) throw badRequest('wrong file identifier/HTTP URL specified');
    if (upload.data.length === 0) throw badRequest('file must be non-empty');
    if (upload.data.length > MAX_UPLOAD) throw badRequest('file is too big');
    const ext = path.extname(upload.filename).toLowerCase();
    const stored = ctx.bot.addFile('documents', ext.slice(1) || 'dat', undefined, upload.data);
    document = {
      file_id: stored.file_id,
      file_unique_id: stored.file_unique_id,
      file_name: upload.filename,
      mime_type: TYPES[ext] ?? 'application/octet-stream',
      file_size: upload.data.length,
    };
  } else {
    const known = ctx.bot.files.get(ref);
    if (!known) throw badRequest('wrong file identifier/HTTP URL specified');
    document = { file_id: known.file_id, file_unique_id: known.file_unique_id, ...(known.file_size !== undefined ? { file_size: known.file_size } : {}) };
  }
  const caption = typeof ctx.params.caption === 'string' && ctx.params.caption !== '' ? ctx.params.caption : undefined;
  if (caption !== undefined && caption.length > MAX_CAPTION) throw badRequest('message caption is too long');
  const thread = int(ctx.params.message_thread_id);
  const sent = ctx.bot.addMessage(
    chat,
    (id) => ({
      message_id: id,
      ...(thread !== undefined ? { message_thread_id: thread } : {}),
      from: ctx.bot.asSender,
      chat: { ...chat.chat },
      date: unixNow(),
      document,
      ...(caption !== undefined ? { caption } : {}),
    }),
    { fromBot: true },
  );
  return { result: sent.message };
};

/** Handlers of the file-sending methods, keyed by lower-cased method name. */
export const FILE_METHODS: Record<string, MethodHandler> = { senddocument: sendDocument };
