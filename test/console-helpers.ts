import { request } from 'node:http';
import { api, type ApiResponse, type GatewayProcess } from '@switchboard/testkit';

/** A console sign-in: the answer, the session cookie (`swb_session=<value>`) and the raw `Set-Cookie`. */
export interface SignedIn {
  res: ApiResponse;
  /** `swb_session=<value>`, ready for a `Cookie` header. */
  cookie: string;
  setCookie: string;
  csrf: string;
}

/** Signs in to the console with `token` (expects 200). */
export async function signIn(gw: GatewayProcess, token: string): Promise<SignedIn> {
  const res = await api(gw, 'POST', '/api/v1/auth/session', { body: { token } });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0] ?? '';
  return { res, cookie, setCookie, csrf: res.json.csrfToken as string };
}

/** A control-API call authenticated by a console session cookie (and the CSRF header when given). */
export function withCookie(
  gw: GatewayProcess,
  method: string,
  path: string,
  s: { cookie: string; csrf?: string },
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  return api(gw, method, path, {
    ...opts,
    headers: { cookie: s.cookie, ...(s.csrf ? { 'x-csrf-token': s.csrf } : {}), ...(opts.headers ?? {}) },
  });
}

/** An HTTP request from a chosen local source address (the failed-auth limiter keys on it). */
export function httpFrom(
  gw: GatewayProcess,
  address: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  const url = new URL(`${gw.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method, headers, localAddress: address }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One server-sent event: its name (`ping` for a comment) and its parsed data. */
export interface SseEvent {
  type: string;
  data: any;
}

/** A live stream reader: every event so far, and a wait for the next matching one. */
export interface SseStream {
  status: number;
  headers: Record<string, unknown>;
  events: SseEvent[];
  /** The first event at or after index `since` matching `pred`; rejects after `timeoutMs` or when the stream ends without it. */
  next(pred: (e: SseEvent) => boolean, since?: number, timeoutMs?: number): Promise<SseEvent>;
  /** Settles when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens `GET /api/v1/events` with `headers` (Bearer or cookie) and parses it as it arrives. */
export function openEvents(gw: GatewayProcess, headers: Record<string, string>): Promise<SseStream> {
  const url = new URL(`${gw.url}/api/v1/events`);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers: { accept: 'text/event-stream', ...headers } },
      (res) => {
        const events: SseEvent[] = [];
        const waiters = new Set<() => void>();
        let done = false;
        let buf = '';
        let endResolve: () => void = () => undefined;
        const ended = new Promise<void>((r) => (endResolve = r));
        const wake = () => {
          for (const w of [...waiters]) w();
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            if (block.startsWith(':')) {
              events.push({ type: block.slice(1).trim() === 'ping' ? 'ping' : 'comment', data: block.slice(1).trim() });
              continue;
            }
            let type = 'message';
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) type = line.slice(7);
              else if (line.startsWith('data: ')) data += line.slice(6);
            }
            events.push({ type, data: data === '' ? null : JSON.parse(data) });
          }
          wake();
        });
        const finish = () => {
          done = true;
          endResolve();
          wake();
        };
        res.on('end', finish);
        res.on('close', finish);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          events,
          ended,
          close: () => req.destroy(),
          next(pred, since = 0, timeoutMs = 15_000) {
            return new Promise((ok, fail) => {
              const check = () => {
                const found = events.slice(since).find(pred);
                if (found) {
                  cleanup();
                  ok(found);
                } else if (done) {
                  cleanup();
                  fail(new Error(`the stream ended without the event; got ${JSON.stringify(events.map((e) => e.type))}`));
                }
              };
              const timer = setTimeout(() => {
                cleanup();
                fail(new Error(`no matching event in ${timeoutMs} ms; got ${JSON.stringify(events.map((e) => e.type))}`));
              }, timeoutMs);
              const cleanup = () => {
                clearTimeout(timer);
                waiters.delete(check);
              };
              waiters.add(check);
              check();
            });
          },
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
