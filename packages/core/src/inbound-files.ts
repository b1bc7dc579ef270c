import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { InboundFile, InboundMessage } from './channel.js';
import { imageDigest, MAX_IMAGE_BLOCK_BYTES, type InboundImage, sniffImageType } from './inbound-images.js';
import type { WorkspaceDirectories, WorkspaceOwner } from './workspaces.js';

/** The directory, inside a workspace, where files people send land. */
export const INBOX_DIR = 'inbox';

const MAX_NAME = 100;
const MAX_TRIES = 1000;

/** Extensions for media types platforms send without a name (a Telegram photo). */
const EXTENSIONS = new Map<string, string>([
  ['image/jpeg', '.jpg'],
  ['image/png', '.png'],
  ['image/gif', '.gif'],
  ['image/webp', '.webp'],
  ['application/pdf', '.pdf'],
  ['text/plain', '.txt'],
]);

/**
 * A safe file name for an untrusted platform name: the last path segment only, letters, digits
 * and `. _ - ( ) + , @ space` kept (others become `_`), no leading dots or spaces (never `.`,
 * `..` or a hidden file), at most 100 characters with the extension kept, and `file<ext>` when
 * nothing is left. Pure; never throws.
 */
export function sanitizeFileName(raw: unknown, mimeType?: unknown): string {
  const text = typeof raw === 'string' ? raw : '';
  const last = text.split(/[/\\]/u).pop() ?? '';
  let name = '';
  for (const ch of last.normalize('NFC')) name += /[\p{L}\p{N}._\-()+,@ ]/u.test(ch) ? ch : '_';
  name = name
    .replace(/_+/gu, '_')
    .replace(/^[.\s]+/u, '')
    .replace(/\s+$/u, '');
  const ext = path.extname(name);
  if (name === '' || name === ext) {
    const fromType = typeof mimeType === 'string' ? EXTENSIONS.get(mimeType.toLowerCase()) : undefined;
    name = `file${ext || fromType || ''}`;
  }
  const chars = [...name];
  if (chars.length > MAX_NAME) {
    const extChars = [...path.extname(name)].slice(0, 16);
    name = chars.slice(0, MAX_NAME - extChars.length).join('') + extChars.join('');
  }
  return name;
}

/** The `n`th alternative of a name taken already: `report-1.pdf`, `report-2.pdf`, … */
export function alternativeName(name: string, n: number): string {
  if (n === 0) return name;
  const ext = path.extname(name);
  return `${name.slice(0, name.length - ext.length)}-${n}${ext}`;
}

/** A saved file as the model is told about it. */
export interface SavedFile {
  /** Workspace-relative, `/`-separated: `inbox/report.pdf`. */
  relative: string;
  mimeType: string;
  kind: InboundFile['kind'];
  bytes: number;
}

/** The line the model reads for a saved file. Pure. */
export function describeSavedFile(file: SavedFile): string {
  return `[The user sent ${file.kind === 'image' ? 'an image' : 'a file'}; it is saved in your workspace at ${file.relative} (${file.mimeType || 'unknown type'}, ${file.bytes} bytes)]`;
}

/** The line the model reads for a file that could not be saved. Pure. */
export function describeUnsavedFile(name: string, reason: string): string {
  return `[The user sent a file "${sanitizeFileName(name)}" that could not be saved: ${reason}. Tell them.]`;
}

/** The inbox directory of a workspace, created if missing; refused when it is not a real directory inside the workspace. */
async function inboxOf(workspace: string): Promise<string> {
  const dir = path.join(workspace, INBOX_DIR);
  // Readable by the sandboxed shell (another uid), so `exec` can work on what the person sent.
  await mkdir(dir, { recursive: true, mode: 0o755 });
  const info = await lstat(dir);
  if (!info.isDirectory()) throw new Error(`${INBOX_DIR}/ in the workspace is not a directory`);
  const [root, real] = await Promise.all([realpath(workspace), realpath(dir)]);
  if (path.dirname(real) !== root) throw new Error(`${INBOX_DIR}/ leads outside the workspace`);
  return real;
}

/** Writes `data` under a free name in `dir` (never overwriting, never following a link); returns the name used. */
export async function writeNew(dir: string, name: string, data: Uint8Array): Promise<string> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
  for (let n = 0; n < MAX_TRIES; n++) {
    const candidate = alternativeName(name, n);
    const target = path.join(dir, candidate);
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(target, flags, 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    try {
      await handle.writeFile(data);
      await handle.close();
    } catch (err) {
      await handle.close().catch(() => {});
      await unlink(target).catch(() => {});
      throw err;
    }
    return candidate;
  }
  throw new Error(`too many files named like ${name}`);
}

/** Whose workspace the files of a message land in: the same rule as the turn's (a room's, a person's, none for an unknown room sender). */
export function fileOwner(message: InboundMessage): WorkspaceOwner | null {
  if (!message.principalId) return null;
  return message.kind === 'room'
    ? { kind: 'room', channel: message.channel, account: message.account, conversation: message.conversation.id }
    : { kind: 'person', principalId: message.principalId };
}

function reasonOf(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * Saves the files of an admitted message in its workspace's `inbox/` and returns the message
 * without them, its text followed by one line per file (where it is, or why it is not). A
 * message without files is returned as it is. Never throws for one file's failure: the model is
 * told, so nothing the person sent disappears silently.
 */
export async function attachInboundFiles(message: InboundMessage, agentId: string, workspaces: Pick<WorkspaceDirectories, 'ensure'>): Promise<InboundMessage> {
  const { files, ...rest } = message;
  if (!files || files.length === 0) return rest;
  const owner = fileOwner(message);
  const lines: string[] = [];
  const images: InboundImage[] = [];
  let inbox: string | null = null;
  let inboxError = owner ? '' : 'the gateway does not know this sender, so there is no workspace for it';
  if (owner) {
    try {
      const workspace = await workspaces.ensure(agentId, owner);
      inbox = await inboxOf(workspace);
    } catch (err) {
      inboxError = reasonOf(err);
    }
  }
  for (const file of files) {
    if (!inbox) {
      lines.push(describeUnsavedFile(file.name, inboxError));
      continue;
    }
    if (typeof file.fetch !== 'function') {
      // A message stored before admission (held for pairing) keeps only the file's description.
      lines.push(describeUnsavedFile(file.name, 'it arrived before the sender was admitted; ask them to send it again'));
      continue;
    }
    try {
      const data = await file.fetch();
      const name = await writeNew(inbox, sanitizeFileName(file.name, file.mimeType), data);
      const mediaType = sniffImageType(data);
      if (mediaType && data.byteLength <= MAX_IMAGE_BLOCK_BYTES) images.push({ path: path.join(inbox, name), mediaType, sha256: imageDigest(data) });
      lines.push(describeSavedFile({ relative: `${INBOX_DIR}/${name}`, mimeType: file.mimeType, kind: file.kind, bytes: data.byteLength }));
    } catch (err) {
      lines.push(describeUnsavedFile(file.name, reasonOf(err)));
    }
  }
  return { ...rest, text: [rest.text, ...lines].filter((t) => t !== '').join('\n'), ...(images.length > 0 ? { images } : {}) };
}

/** The signal of one inbound-file download: the channel's stop and the download's own time limit (default 60 s). */
export function downloadSignal(src: { signal?: AbortSignal; timeoutMs?: number }): AbortSignal {
  const limit = AbortSignal.timeout(src.timeoutMs ?? 60_000);
  return src.signal ? AbortSignal.any([src.signal, limit]) : limit;
}

/**
 * Reads a response body, rejecting as soon as it grows past `maxBytes` (the declared length is
 * checked first). Never resolves a partial body.
 */
export async function readBounded(res: Response, maxBytes: number, what = 'the file'): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw new Error(`${what} is larger than the limit of ${maxBytes} bytes`);
  if (!res.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new Error(`${what} is larger than the limit of ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
