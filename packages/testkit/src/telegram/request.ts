import type { IncomingMessage, ServerResponse } from 'node:http';
import { type MultipartFile, parseMultipart } from '../multipart.js';

/** Largest request body the fake reads (Bot API uploads are capped at 50 MB). */
export const MAX_BODY = 50 * 1024 * 1024;

/** A parsed Bot API request path: `/bot<token>/<method>` (or `/bot<token>/test/<method>`), or a file download. */
export type ParsedPath = { kind: 'method'; token: string; method: string } | { kind: 'file'; token: string; filePath: string } | { kind: 'other' };

/** Splits the URL path; the token never leaves this object except to key bot state. */
export function parsePath(url: string): ParsedPath {
  const path = url.split('?')[0] ?? '';
  const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(path);
  if (file?.[1] && file[2]) return { kind: 'file', token: decodeURIComponent(file[1]), filePath: decodeURIComponent(file[2]) };
  const m = /^\/bot([^/]+)\/(?:test\/)?([^/]+)$/.exec(path);
  if (m?.[1] && m[2]) return { kind: 'method', token: decodeURIComponent(m[1]), method: decodeURIComponent(m[2]) };
  return { kind: 'other' };
}

/**
 * Reads the parameters like Telegram: query string, then a JSON or urlencoded body on top.
 * Returns an error description for bodies the fake cannot read (multipart, bad JSON).
 */
export async function readParams(req: IncomingMessage): Promise<{ params: Record<string, unknown>; uploads?: Map<string, MultipartFile> } | { error: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= MAX_BODY) chunks.push(chunk as Buffer);
  }
  if (size > MAX_BODY) return { error: 'Request Entity Too Large' };
  const params: Record<string, unknown> = {};
  const query = (req.url ?? '').split('?')[1];
  if (query) for (const [k, v] of new URLSearchParams(query)) params[k] = v;
  const raw = Buffer.concat(chunks);
  const body = raw.toString('utf8');
  if (body.trim() === '') return { params };
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('multipart/form-data')) {
    // Uploads (sendDocument with an InputFile): fields are parameters, file parts `attach://<name>` targets.
    const parsed = parseMultipart(raw, req.headers['content-type'] ?? '');
    if ('error' in parsed) return { error: `Bad Request: ${parsed.error}` };
    return { params: { ...params, ...parsed.fields }, uploads: parsed.files };
  }
  if (type.startsWith('multipart/')) return { error: 'Bad Request: the fake Telegram accepts multipart/form-data only' };
  if (type.includes('application/x-www-form-urlencoded')) {
    for (const [k, v] of new URLSearchParams(body)) params[k] = v;
    return { params };
  }
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { error: 'Bad Request: request body must be a JSON object' };
    return { params: { ...params, ...(parsed as Record<string, unknown>) } };
  } catch {
    return { error: "Bad Request: can't parse JSON encoded request body" };
  }
}

/** Writes a JSON body with an exact content-length. */
export function sendJson(res: ServerResponse, status: number, body: unknown): string {
  const json = JSON.stringify(body);
  if (res.destroyed || res.writableEnded) return json;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
  return json;
}

/** Params as they go to the run log: the webhook `secret_token` is replaced (it is the fake's secret to keep). */
export function loggableParams(params: Record<string, unknown>): Record<string, unknown> {
  return 'secret_token' in params ? { ...params, secret_token: '[redacted]' } : params;
}
