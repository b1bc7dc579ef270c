import type { IncomingMessage } from 'node:http';
import type { SlackCall } from './fake-slack-types.js';

const MAX_BODY = 8 * 1024 * 1024;

/** A Web API request as read off the wire: method from `/api/{method}`, params from query + body. */
export interface SlackApiRequest {
  /** `''` when the path is not under `/api/`. */
  method: string;
  /** Query and body params merged, still raw (form values are strings); may include `token`. */
  rawParams: Record<string, unknown>;
  contentType: SlackCall['contentType'];
  /** Bearer token from `Authorization`, else the `token` param; never log it. */
  token: string | undefined;
  tooLarge: boolean;
  invalidJson: boolean;
}

/** Reads and parses a Web API request: `application/json` or form-encoded bodies, as Slack accepts both. */
export async function readSlackApiRequest(req: IncomingMessage): Promise<SlackApiRequest> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= MAX_BODY) chunks.push(chunk as Buffer);
  }
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const method = url.pathname.startsWith('/api/') ? url.pathname.slice(5) : '';
  const raw = Buffer.concat(chunks).toString('utf8');
  const ctype = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const rawParams: Record<string, unknown> = Object.fromEntries(url.searchParams);
  let contentType: SlackCall['contentType'] = 'none';
  let invalidJson = false;
  if (ctype === 'application/json' && raw !== '') {
    contentType = 'json';
    try {
      Object.assign(rawParams, JSON.parse(raw) as Record<string, unknown>);
    } catch {
      invalidJson = true;
    }
  } else if (raw !== '') {
    contentType = 'form';
    Object.assign(rawParams, Object.fromEntries(new URLSearchParams(raw)));
  }
  const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  const token = bearer ?? (typeof rawParams.token === 'string' ? rawParams.token : undefined);
  return { method, rawParams, contentType, token, tooLarge: size > MAX_BODY, invalidJson };
}
