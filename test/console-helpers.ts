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
