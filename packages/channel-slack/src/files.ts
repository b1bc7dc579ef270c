import type { OutboundFile } from '@switchboard/agent';
import { type ConversationRef, downloadSignal, type InboundFile, readBounded } from '@switchboard/core';
import type { WebClient } from '@slack/web-api';

/** A file shared in a Slack message event, as far as the adapter reads it. */
export interface SlackFileRef {
  id: string;
  name: string;
  mimeType: string;
  kind: 'document' | 'image';
  /** The declared size, when Slack gave a finite non-negative one. */
  size?: number;
  /** `url_private_download` (fetched with the bot token), absent for files Slack does not let the bot download. */
  url?: string;
}

const text = (v: unknown, max = 2048): string | undefined => (typeof v === 'string' && v !== '' && v.length <= max ? v : undefined);

/**
 * The files of a message event (`files` of a `file_share` message). Pure and total: anything that
 * is not an array of objects gives none; a file without an id is skipped; missing names, types,
 * sizes and links get stand-ins (a file without a link is still described, so the person hears
 * it could not be fetched). At most 20 files.
 */
export function describeSlackFiles(event: unknown): SlackFileRef[] {
  if (typeof event !== 'object' || event === null) return [];
  const files = (event as { files?: unknown }).files;
  if (!Array.isArray(files)) return [];
  const out: SlackFileRef[] = [];
  for (const f of files.slice(0, 20)) {
    if (typeof f !== 'object' || f === null) continue;
    const o = f as Record<string, unknown>;
    const id = text(o.id, 64);
    if (!id) continue;
    const mimeType = text(o.mimetype, 255) ?? 'application/octet-stream';
    const size = typeof o.size === 'number' && Number.isFinite(o.size) && o.size >= 0 ? o.size : undefined;
    const url = text(o.url_private_download);
    out.push({
      id,
      name: text(o.name, 1024) ?? text(o.title, 1024) ?? id,
      mimeType,
      kind: mimeType.startsWith('image/') ? 'image' : 'document',
      ...(size !== undefined ? { size } : {}),
      ...(url ? { url } : {}),
    });
  }
  return out;
}

/**
 * Whether the bot token may be sent to `url`: Slack's file host over HTTPS, or the origin of the
 * configured `apiUrl` (a test fake). Any other host would receive the token, so it is refused.
 */
export function mayCarryToken(url: string, apiUrl: string): boolean {
  try {
    const u = new URL(url);
    if (u.protocol === 'https:' && (u.hostname === 'files.slack.com' || u.hostname.endsWith('.slack.com'))) return true;
    return u.origin === new URL(apiUrl).origin;
  } catch {
    return false;
  }
}

/** What downloads need: the bot token, the account's `apiUrl` (for the host check), the size limit. */
export interface SlackFileSource {
  token: string;
  apiUrl: string;
  maxBytes: number;
  signal?: AbortSignal;
  /** A download that takes longer fails (default 60 s). */
  timeoutMs?: number;
}

/** The file as the gateway fetches it: `GET url_private_download` with `Authorization: Bearer <bot token>`, no redirects followed. */
export function slackInboundFile(ref: SlackFileRef, src: SlackFileSource): InboundFile {
  return {
    name: ref.name,
    mimeType: ref.mimeType,
    kind: ref.kind,
    ...(ref.size !== undefined ? { size: ref.size } : {}),
    fetch: async () => {
      if (!ref.url) throw new Error('Slack gave no download link for the file (the bot may lack the files:read scope)');
      if (!mayCarryToken(ref.url, src.apiUrl)) throw new Error('the download link is not on a Slack host');
      let res: Response;
      try {
        // A redirect means Slack wants a login (token refused): never follow it with the token.
        res = await fetch(ref.url, { headers: { authorization: `Bearer ${src.token}` }, redirect: 'manual', signal: downloadSignal(src) });
      } catch (err) {
        throw new Error(`the download failed (${err instanceof Error ? err.message : String(err)})`);
      }
      if (res.status >= 300 && res.status < 400) throw new Error('Slack refused the download (check the bot has the files:read scope)');
      if (!res.ok) throw new Error(`the download failed (HTTP ${res.status})`);
      return readBounded(res, src.maxBytes);
    },
  };
}

/**
 * Shares a file in a conversation with Slack's external upload flow: `files.getUploadURLExternal`
 * (name and length), the bytes POSTed to the `upload_url` it answers, then
 * `files.completeUploadExternal` with the channel (and thread). Resolves with the file id.
 */
export async function uploadSlackFile(api: WebClient, to: ConversationRef, file: OutboundFile, fetchImpl: typeof fetch = fetch): Promise<string> {
  const ticket = await api.files.getUploadURLExternal({ filename: file.name, length: file.data.byteLength });
  if (!ticket.upload_url || !ticket.file_id) throw new Error('Slack gave no upload URL');
  const res = await fetchImpl(ticket.upload_url, { method: 'POST', body: file.data, headers: { 'content-type': 'application/octet-stream' } });
  if (!res.ok) throw new Error(`the upload failed (HTTP ${res.status})`);
  await res.arrayBuffer().catch(() => undefined);
  await api.files.completeUploadExternal({
    files: [{ id: ticket.file_id, title: file.name }],
    channel_id: to.id,
    ...(to.thread ? { thread_ts: to.thread } : {}),
    ...(file.caption ? { initial_comment: file.caption } : {}),
  });
  return ticket.file_id;
}
