import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { SwbErrorCode, type Tool } from '@switchboard/agent';
import { z } from 'zod';
import { FileToolError, fsError, throwIfAborted } from './errors.js';
import { formatBytes } from './text-file.js';
import { confinedPath, normalizeUserPath, resolveInWorkspace } from './workspace-path.js';

/** Default largest file send_file delivers: 50 MiB (Telegram's `sendDocument` limit for bots). */
export const DEFAULT_SEND_FILE_MAX_BYTES = 50 * 1024 * 1024;

const sendFileInput = z.strictObject({
  path: z.string().min(1).describe('File to send, relative to the workspace (e.g. reports/summary.pdf).'),
  caption: z.string().max(1000).optional().describe('A short text sent with the file.'),
});

/** Input of send_file. */
export type SendFileInput = z.output<typeof sendFileInput>;

/** Options of {@link createSendFileTool}. */
export interface SendFileToolOptions {
  /** Largest file (bytes) the tool sends (config `tools.sendFile.maxBytes`). Default {@link DEFAULT_SEND_FILE_MAX_BYTES}. */
  maxBytes?: number;
}

const TYPES = new Map<string, string>([
  ['.pdf', 'application/pdf'],
  ['.txt', 'text/plain'],
  ['.md', 'text/markdown'],
  ['.csv', 'text/csv'],
  ['.json', 'application/json'],
  ['.html', 'text/html'],
  ['.png', 'image/png'],
  ['.jpg', 'image/jpeg'],
  ['.jpeg', 'image/jpeg'],
  ['.gif', 'image/gif'],
  ['.webp', 'image/webp'],
  ['.svg', 'image/svg+xml'],
  ['.zip', 'application/zip'],
]);

/** The media type a file name suggests (`application/octet-stream` when its extension is not known). Pure. */
export function mimeTypeOf(name: string): string {
  return TYPES.get(path.extname(name).toLowerCase()) ?? 'application/octet-stream';
}

/**
 * Creates `send_file`: delivers a workspace file to the conversation the turn answers (Telegram
 * document, Slack file, WebSocket `file` frame). Confined to the workspace exactly like the other
 * file tools (`resolveInWorkspace`): a path outside it, or a link leading out, is refused.
 */
export function createSendFileTool(opts: SendFileToolOptions = {}): Tool<SendFileInput> {
  const maxBytes = opts.maxBytes ?? DEFAULT_SEND_FILE_MAX_BYTES;
  return {
    name: 'send_file',
    description:
      'Send a file from the workspace to the person you are talking with, as a document or attachment in this chat. ' +
      `Use it for files you wrote or were asked to share; files up to ${formatBytes(maxBytes)}.`,
    input: sendFileInput,
    readOnly: true,
    concurrencySafe: false,
    ruleContent: (input) => normalizeUserPath(input.path),
    validateInput: confinedPath((input) => input.path),
    async call(input, ctx) {
      throwIfAborted(ctx.signal, 'send_file');
      const target = await resolveInWorkspace(ctx.workspace, input.path);
      if (!ctx.sendFile) throw new FileToolError(SwbErrorCode.ToolInput, 'this chat cannot receive files; tell the person where the file is instead');
      let info: Awaited<ReturnType<typeof stat>>;
      try {
        info = await stat(target.real);
      } catch (err) {
        throw fsError(err, target.relative);
      }
      if (!info.isFile()) throw new FileToolError(SwbErrorCode.FileKind, `${target.relative} is not a file`);
      if (info.size > maxBytes) {
        throw new FileToolError(SwbErrorCode.FileTooLarge, `${target.relative} is ${formatBytes(info.size)}; send_file sends at most ${formatBytes(maxBytes)}`);
      }
      let data: Buffer;
      try {
        data = await readFile(target.real, { signal: ctx.signal });
      } catch (err) {
        throwIfAborted(ctx.signal, 'send_file');
        throw fsError(err, target.relative);
      }
      const name = path.basename(target.real);
      const sent = await ctx.sendFile({ name, mimeType: mimeTypeOf(name), data, ...(input.caption ? { caption: input.caption } : {}) });
      return { content: `Sent ${target.relative} (${formatBytes(data.byteLength)}): ${sent}` };
    },
  };
}
