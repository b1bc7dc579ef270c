/**
 * The console's client of the gateway's control API. Every call is a relative URL under
 * `/api/v1` with `credentials: 'same-origin'` (the session cookie), and every state-changing
 * request carries `X-CSRF-Token`. No token or gateway address ever comes from the page's URL.
 */

/** The API prefix: the control API stays at `/api/v1` whatever `console.basePath` is. */
export const API_PREFIX = '/api/v1';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** An error answer of the API (`{ code, message }`), or `network` when no answer came. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** The answer's body, for answers that carry more than `{ code, message }` (a 409 with the approval). */
  readonly body: unknown;
  constructor(status: number, code: string, message: string, body: unknown = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

/** A query string's values; `undefined`, `null` and `''` are left out. */
export type Query = Record<string, string | number | boolean | null | undefined>;

/** Path segment from a server-provided id: encoded, so an id can never change the route. */
export const seg = (id: string): string => encodeURIComponent(id);

/** `/api/v1<path>?<query>` with empty values left out. */
export function apiUrl(path: string, query?: Query): string {
  if (!path.startsWith('/')) throw new Error(`api path must start with "/": ${path}`);
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null || value === '') continue;
    params.append(key, String(value));
  }
  const qs = params.toString();
  return `${API_PREFIX}${path}${qs ? `?${qs}` : ''}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The `ApiError` of a non-2xx answer, from its body when it is the API's `{ code, message }`. */
export function errorOf(status: number, body: unknown): ApiError {
  if (isRecord(body) && typeof body.code === 'string' && typeof body.message === 'string') {
    return new ApiError(status, body.code, body.message, body);
  }
  return new ApiError(status, `http_${status}`, `The gateway answered ${status}.`, body);
}

export interface ApiClientOptions {
  /** The fetch to use (tests pass one bound to a loopback server). */
  fetch?: typeof fetch;
  /** Called on every 401 answer (the console session ended: expired, logged out, token revoked). */
  onUnauthorized?: (err: ApiError) => void;
}

/** The client: `get`/`post`/`put`/`patch`/`del` answer the parsed JSON or throw `ApiError`. */
export interface ApiClient {
  setCsrfToken(token: string | null): void;
  request<T>(method: string, path: string, opts?: { query?: Query; body?: unknown }): Promise<T>;
  get<T>(path: string, query?: Query): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  put<T>(path: string, body?: unknown): Promise<T>;
  patch<T>(path: string, body?: unknown): Promise<T>;
  del<T>(path: string, opts?: { query?: Query; body?: unknown }): Promise<T>;
}

/** Creates an API client; the CSRF token is held in memory only (never in storage). */
export function createApiClient(options: ApiClientOptions = {}): ApiClient {
  let csrfToken: string | null = null;
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));

  async function request<T>(method: string, path: string, opts: { query?: Query; body?: unknown } = {}): Promise<T> {
    const upper = method.toUpperCase();
    const headers: Record<string, string> = { accept: 'application/json' };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    if (STATE_CHANGING.has(upper) && csrfToken !== null) headers['x-csrf-token'] = csrfToken;
    let res: Response;
    try {
      res = await doFetch(apiUrl(path, opts.query), {
        method: upper,
        headers,
        credentials: 'same-origin',
        cache: 'no-store',
        redirect: 'error',
        ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      });
    } catch (err) {
      throw new ApiError(0, 'network', `The gateway could not be reached (${err instanceof Error ? err.message : String(err)}).`);
    }
    const text = await res.text().catch(() => '');
    let body: unknown = null;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    if (!res.ok) {
      const err = errorOf(res.status, body);
      if (res.status === 401) options.onUnauthorized?.(err);
      throw err;
    }
    return body as T;
  }

  return {
    setCsrfToken(token) {
      csrfToken = token;
    },
    request,
    get: (path, query) => request('GET', path, query ? { query } : {}),
    post: (path, body) => request('POST', path, { body: body ?? {} }),
    put: (path, body) => request('PUT', path, { body: body ?? {} }),
    patch: (path, body) => request('PATCH', path, { body: body ?? {} }),
    del: (path, opts) => request('DELETE', path, opts ?? {}),
  };
}
