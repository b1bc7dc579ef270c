import { downloadSignal, type InboundFile, type InboundMessage, readBounded } from '@switchboard/core';
import { type Api, InputFile } from 'grammy';
import type { OutboundFile } from '@switchboard/agent';
import type { TgMessage } from './update-schema.js';

/** A file of a Telegram message the adapter downloads (a document, or a photo's largest size). */
export interface TelegramFileRef {
  fileId: string;
  name: string;
  mimeType: string;
  kind: 'document' | 'image';
  size?: number;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const size = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/**
 * The files of a message the gateway saves: its `document` and the largest of its `photo` sizes.
 * Pure and total over any shape that passed the update schema (missing names, types and sizes
 * get stand-ins; sizes that are not finite non-negative numbers are treated as unknown).
 */
export function describeTelegramFiles(m: Pick<TgMessage, 'document' | 'photo' | 'message_id'>): TelegramFileRef[] {
  const out: TelegramFileRef[] = [];
  const doc = m.document;
  if (doc && text(doc.file_id)) {
    const declared = size(doc.file_size);
    out.push({
      fileId: doc.file_id,
      name: text(doc.file_name) ?? `document-${m.message_id}`,
      mimeType: text(doc.mime_type) ?? 'application/octet-stream',
      kind: text(doc.mime_type)?.startsWith('image/') ? 'image' : 'document',
      ...(declared !== undefined ? { size: declared } : {}),
    });
  }
  const photos = Array.isArray(m.photo) ? m.photo.filter((p) => text(p.file_id)) : [];
  if (photos.length > 0) {
    // Telegram lists a photo's sizes smallest first; the last is the original.
    const best = photos.reduce((a, b) => ((size(b.file_size) ?? 0) >= (size(a.file_size) ?? 0) ? b : a));
    const declared = size(best.file_size);
    out.push({
      fileId: best.file_id,
      name: `photo-${m.message_id}.jpg`,
      mimeType: 'image/jpeg',
      kind: 'image',
      ...(declared !== undefined ? { size: declared } : {}),
    });
  }
  return out;
}

/** What the downloads need: the API client (getFile), the Bot API root and token (file URL), the size limit. */
export interface TelegramFileSource {
  api: Pick<Api, 'getFile'>;
  apiRoot: string;
  token: string;
  maxBytes: number;
  signal?: AbortSignal;
  /** A download that takes longer fails (default 60 s). */
  timeoutMs?: number;
}

/** The file as the gateway fetches it: `getFile`, then `GET <apiRoot>/file/bot<token>/<file_path>`. Errors never carry the token. */
export function telegramInboundFile(ref: TelegramFileRef, src: TelegramFileSource): InboundFile {
  return {
    name: ref.name,
    mimeType: ref.mimeType,
    kind: ref.kind,
    ...(ref.size !== undefined ? { size: ref.size } : {}),
    fetch: async () => {
      let filePath: string | undefined;
      try {
        const file = await src.api.getFile(ref.fileId);
        filePath = file.file_path;
        if (file.file_size !== undefined && file.file_size > src.maxBytes) throw new Error(`the file is larger than the limit of ${src.maxBytes} bytes`);
      } catch (err) {
        throw new Error(`Telegram did not give the file (getFile: ${safeMessage(err, src.token)})`);
      }
      if (!filePath) throw new Error('Telegram gave no download path for the file');
      const url = `${src.apiRoot.replace(/\/+$/u, '')}/file/bot${src.token}/${filePath.split('/').map(encodeURIComponent).join('/')}`;
      let res: Response;
      try {
        res = await fetch(url, { signal: downloadSignal(src) });
      } catch (err) {
        throw new Error(`the download failed (${safeMessage(err, src.token)})`);
      }
      if (!res.ok) throw new Error(`the download failed (HTTP ${res.status})`);
      return readBounded(res, src.maxBytes, 'the file');
    },
  };
}

function safeMessage(err: unknown, token: string): string {
  const msg = err instanceof Error ? err.message : String(err);
  return token ? msg.split(token).join('[token]') : msg;
}

/** Where a document goes: a chat and, in a forum, its topic. */
export interface DocumentTarget {
  chatId: number;
  thread?: number;
}

/** Sends a file as a document (`sendDocument`, multipart through grammY's `InputFile`); resolves with the message id. */
export async function sendDocument(api: Pick<Api, 'sendDocument'>, to: DocumentTarget, file: OutboundFile): Promise<number> {
  const m = await api.sendDocument(to.chatId, new InputFile(file.data, file.name), {
    ...(to.thread !== undefined ? { message_thread_id: to.thread } : {}),
    ...(file.caption ? { caption: file.caption.slice(0, 1024) } : {}),
  });
  return m.message_id;
}

/** The inbound message with the files of `m` it carries (unchanged when it has none). */
export function withTelegramFiles(message: InboundMessage, m: Pick<TgMessage, 'document' | 'photo' | 'message_id'>, src: TelegramFileSource): InboundMessage {
  const refs = describeTelegramFiles(m);
  return refs.length === 0 ? message : { ...message, files: refs.map((ref) => telegramInboundFile(ref, src)) };
}
