/**
 * Total describers of Slack failures: any thrown value (errors of the Web API SDK, of fetch, of
 * undici, strings, `undefined`, objects with throwing getters, proxies) gives a short, secret-free
 * description and never throws.
 */

/** How a failure should be handled. */
export type SlackFailureKind =
  /** The platform refused the token: retrying will not help until the operator changes it. */
  | 'permanent'
  /** The request never got an answer (refused, DNS, reset, timeout). */
  | 'network'
  /** A 5xx from Slack. */
  | 'server'
  | 'ratelimited'
  /** Slack answered `ok: false` with some other error (channel_not_found, msg_too_long, …). */
  | 'platform'
  /** Cancelled because the channel is stopping. */
  | 'cancelled'
  | 'other';

/** A described failure. `code` is the platform error or a short code; `cause` names the network cause. */
export interface SlackFailure {
  kind: SlackFailureKind;
  code: string;
  /** For network failures: `ECONNREFUSED 127.0.0.1:4000`, `ENOTFOUND slack.com`, `timed out after 500 ms`. */
  cause?: string;
}

/** Platform errors that mean the token itself is refused. */
export const PERMANENT_SLACK_ERRORS: ReadonlySet<string> = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'not_allowed_token_type',
  'team_disabled',
]);

/** Reads `key` of an unknown value; a throwing getter or proxy trap reads as undefined. */
function read(v: unknown, key: string): unknown {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return undefined;
  try {
    return (v as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

const str = (v: unknown, max = 120): string | undefined => (typeof v === 'string' && v !== '' ? v.slice(0, max) : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The errno-style cause at the bottom of a fetch failure (`cause`, `original`, AggregateError `errors`), or undefined. */
export function networkCause(err: unknown, timeoutMs?: number): string | undefined {
  const seen = new Set<unknown>();
  let cur: unknown = err;
  for (let depth = 0; depth < 8 && cur !== undefined && cur !== null && !seen.has(cur); depth++) {
    seen.add(cur);
    const name = str(read(cur, 'name'));
    if (name === 'TimeoutError') return timeoutMs !== undefined ? `timed out after ${timeoutMs} ms` : 'timed out';
    if (name === 'AbortError') return 'cancelled';
    const code = str(read(cur, 'code'), 40);
    if (code && /^E[A-Z_]+$/.test(code)) {
      const address = str(read(cur, 'address'), 80);
      const port = num(read(cur, 'port'));
      const hostname = str(read(cur, 'hostname'), 200);
      if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return hostname ? `${code} ${hostname}` : code;
      if (address) return port !== undefined ? `${code} ${address.includes(':') ? `[${address}]` : address}:${port}` : `${code} ${address}`;
      return code;
    }
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `timed out (${code})`;
    if (code === 'UND_ERR_SOCKET') return 'connection closed by the peer';
    const errors = read(cur, 'errors');
    const first = Array.isArray(errors) && errors.length > 0 ? (errors[0] as unknown) : undefined;
    cur = first ?? read(cur, 'original') ?? read(cur, 'cause');
  }
  return undefined;
}

/** Describes any thrown value; never throws. `timeoutMs` words a timeout. */
export function describeSlackError(err: unknown, timeoutMs?: number): SlackFailure {
  try {
    const code = str(read(err, 'code'), 64);
    const platform = str(read(read(err, 'data'), 'error'), 64);
    if (platform) return { kind: PERMANENT_SLACK_ERRORS.has(platform) ? 'permanent' : 'platform', code: platform };
    if (code === 'slack_webapi_rate_limited_error') return { kind: 'ratelimited', code: 'ratelimited' };
    if (code === 'slack_webapi_http_error') {
      const status = num(read(err, 'statusCode'));
      const kind: SlackFailureKind = status === 401 || status === 403 ? 'permanent' : status !== undefined && status >= 500 ? 'server' : 'other';
      return { kind, code: `http_${status ?? 'error'}` };
    }
    const cause = networkCause(err, timeoutMs);
    if (cause === 'cancelled') return { kind: 'cancelled', code: 'cancelled' };
    if (cause) return { kind: 'network', code: 'request_error', cause };
    if (code === 'slack_webapi_request_error')
      return { kind: 'network', code: 'request_error', cause: str(read(read(err, 'original'), 'message')) ?? 'request failed' };
    return { kind: 'other', code: 'error' };
  } catch {
    return { kind: 'other', code: 'error' };
  }
}

/** A short, secret-free code for a Web API failure: the platform error (`channel_not_found`), `ratelimited`, `http_503`, `request_error (ECONNREFUSED …)`. */
export function slackErrorCode(err: unknown): string {
  const d = describeSlackError(err);
  return d.cause ? `${d.code} (${d.cause})` : d.code;
}

/** The Retry-After of a rate-limited call (ms), or null. Never throws. */
export function retryAfterMs(err: unknown): number | null {
  const secs = num(read(err, 'retryAfter'));
  if (read(err, 'code') !== 'slack_webapi_rate_limited_error' || secs === undefined) return null;
  // A peer's number: negative or absurd values wait nothing or at most a day, never NaN/Infinity.
  const ms = secs * 1000;
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), 86_400_000) : secs > 0 ? 86_400_000 : 0;
}

/** `host:port` of a URL, or the text itself when it is not one. */
export function hostOf(url: string): string {
  try {
    const u = new URL(url);
    return u.port ? `${u.hostname}:${u.port}` : u.hostname;
  } catch {
    return url;
  }
}
