import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseMultipart } from '../multipart.js';

/** A file a user shared, as it appears in a message event's `files` (add it with `FakeSlack.addUserFile`). */
export interface SlackFileObject {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  filetype: string;
  size: number;
  mode: 'hosted';
  url_private: string;
  url_private_download: string;
  [k: string]: unknown;
}

/** A file the bot uploaded through `files.getUploadURLExternal` + upload + `files.completeUploadExternal`. */
export interface SlackUploadedFile {
  id: string;
  filename: string;
  /** The `length` declared to `files.getUploadURLExternal`. */
  length: number;
  title?: string;
  /** Where `files.completeUploadExternal` shared it. */
  channel?: string;
  thread_ts?: string;
  initial_comment?: string;
  content: Buffer;
}

interface PendingUpload {
  id: string;
  filename: string;
  length: number;
  content?: Buffer;
  completed: boolean;
}

const MAX_UPLOAD = 64 * 1024 * 1024;
type Body = Record<string, unknown>;

/**
 * The file side of the fake Slack, in Slack's wire format: user files served at
 * `url_private_download` only with the bot token (`Authorization: Bearer`), and the external upload
 * flow: `files.getUploadURLExternal` (`filename`, `length`) answers `upload_url` + `file_id`; the
 * bytes are POSTed to `upload_url` (raw or multipart, no token needed); `files.completeUploadExternal`
 * (`files` = JSON `[{id,title}]`, `channel_id`, `thread_ts`, `initial_comment`) shares them.
 */
export class SlackFilesState {
  private readonly hosted = new Map<string, { file: SlackFileObject; content: Buffer }>();
  private readonly pending = new Map<string, PendingUpload>();
  readonly uploaded: SlackUploadedFile[] = [];
  private seq = 0;

  constructor(
    private readonly baseUrl: () => string,
    private readonly teamId: string,
  ) {}

  /** Registers a user's file; put the returned object in a message event's `files`. */
  addUserFile(init: { name: string; mimetype?: string; content: string | Uint8Array; title?: string }): SlackFileObject {
    const id = `F0USER${String(++this.seq).padStart(5, '0')}`;
    const content = Buffer.from(init.content);
    const path = `/files-pri/${this.teamId}-${id}/download/${encodeURIComponent(init.name)}`;
    const file: SlackFileObject = {
      id,
      name: init.name,
      title: init.title ?? init.name,
      mimetype: init.mimetype ?? 'application/octet-stream',
      filetype: init.name.includes('.') ? (init.name.split('.').pop() ?? 'binary') : 'binary',
      size: content.length,
      mode: 'hosted',
      url_private: `${this.baseUrl()}${path.replace('/download/', '/')}`,
      url_private_download: `${this.baseUrl()}${path}`,
    };
    this.hosted.set(path, { file, content });
    return { ...file };
  }

  /** The Web API methods of the upload flow; `undefined` for other methods. */
  handle(method: string, p: Body): Body | undefined {
    if (method === 'files.getUploadURLExternal') {
      const filename = typeof p.filename === 'string' ? p.filename : '';
      const length = Number(p.length);
      if (filename === '') return { ok: false, error: 'invalid_arguments', response_metadata: { messages: ['[ERROR] missing required field: filename'] } };
      if (!Number.isInteger(length) || length < 1)
        return { ok: false, error: 'invalid_arguments', response_metadata: { messages: ['[ERROR] missing required field: length'] } };
      if (length > MAX_UPLOAD) return { ok: false, error: 'file_too_large' };
      const id = `F0UP${String(++this.seq).padStart(7, '0')}`;
      this.pending.set(id, { id, filename, length, completed: false });
      return { ok: true, upload_url: `${this.baseUrl()}/upload/v1/${id}`, file_id: id };
    }
    if (method === 'files.completeUploadExternal') return this.complete(p);
    return undefined;
  }

  /** Serves `GET /files-pri/…` and `POST /upload/v1/<id>`; false for other paths. */
  async serve(req: IncomingMessage, res: ServerResponse, botToken: (token: string | undefined) => boolean): Promise<boolean> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path.startsWith('/files-pri/')) {
      const bearer = /^Bearer\s+(\S+)$/iu.exec(req.headers.authorization ?? '')?.[1];
      const hit = this.hosted.get(path);
      // Slack answers a download without a valid token with its login page, not the file.
      if (!botToken(bearer)) return reply(res, 302, 'text/html', 'redirecting to login', { location: 'https://slack.com/signin' });
      if (!hit) return reply(res, 404, 'text/plain', 'file not found');
      return reply(res, 200, hit.file.mimetype, hit.content);
    }
    const upload = /^\/upload\/v1\/([A-Z0-9]+)$/u.exec(path);
    if (upload && req.method === 'POST') {
      const pending = this.pending.get(upload[1] ?? '');
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (!pending || pending.completed) return reply(res, 404, 'text/plain', 'upload url not found');
      pending.content = extractUpload(Buffer.concat(chunks), req.headers['content-type'] ?? '');
      return reply(res, 200, 'text/plain', `OK - ${pending.content.length}`);
    }
    return false;
  }

  private complete(p: Body): Body {
    let files: unknown = p.files;
    if (typeof files === 'string') {
      try {
        files = JSON.parse(files);
      } catch {
        return { ok: false, error: 'invalid_arguments' };
      }
    }
    if (!Array.isArray(files) || files.length === 0) return { ok: false, error: 'invalid_arguments' };
    const channel = typeof p.channel_id === 'string' ? p.channel_id : undefined;
    if (channel !== undefined && !/^[CDG][A-Z0-9]{2,}$/u.test(channel)) return { ok: false, error: 'channel_not_found' };
    const done: PendingUpload[] = [];
    const titles: (string | undefined)[] = [];
    for (const f of files as unknown[]) {
      const id = typeof f === 'object' && f !== null ? (f as { id?: unknown }).id : undefined;
      const pending = typeof id === 'string' ? this.pending.get(id) : undefined;
      if (!pending || pending.completed || !pending.content) return { ok: false, error: 'file_not_found' };
      if (pending.content.length !== pending.length) return { ok: false, error: 'file_upload_size_mismatch' };
      done.push(pending);
      const title = (f as { title?: unknown }).title;
      titles.push(typeof title === 'string' ? title : undefined);
    }
    done.forEach((u, i) => {
      u.completed = true;
      const title = titles[i];
      this.uploaded.push({
        id: u.id,
        filename: u.filename,
        length: u.length,
        content: u.content ?? Buffer.alloc(0),
        ...(title !== undefined ? { title } : {}),
        ...(channel !== undefined ? { channel } : {}),
        ...(typeof p.thread_ts === 'string' ? { thread_ts: p.thread_ts } : {}),
        ...(typeof p.initial_comment === 'string' ? { initial_comment: p.initial_comment } : {}),
      });
    });
    return { ok: true, files: done.map((u, i) => ({ id: u.id, title: titles[i] ?? u.filename })) };
  }
}

// The uploaded bytes: a raw body, or the first file part of a multipart one (the SDK sends either).
function extractUpload(body: Buffer, contentType: string): Buffer {
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) return body;
  const parsed = parseMultipart(body, contentType);
  if ('error' in parsed) return body;
  return [...parsed.files.values()][0]?.data ?? body;
}

function reply(res: ServerResponse, status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}): true {
  const data = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { ...headers, 'content-type': type, 'content-length': data.length }).end(data);
  return true;
}
