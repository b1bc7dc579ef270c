import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the request's unix time in seconds. */
export const TIMESTAMP_HEADER = 'x-switchboard-timestamp';
/** Header carrying `v2=<hex HMAC-SHA256(secret, "<timestamp>.<METHOD>.<path>.<raw body>")>`. */
export const SIGNATURE_HEADER = 'x-switchboard-signature';

const SIGNATURE_RE = /^v2=([0-9a-fA-F]{64})$/;
/** Any other `v<n>=` prefix: an older (or unknown) signing scheme, refused with its own code. */
const OTHER_VERSION_RE = /^v(?!2=)\d{1,6}=/;
const TIMESTAMP_RE = /^\d{1,12}$/;

/** What a signature covers besides the timestamp: the request line and the exact body bytes. */
export interface SignedRequest {
  /** The HTTP method, e.g. `POST` (upper-cased before signing). */
  method: string;
  /** The request path as sent, without the query string, e.g. `/channels/webhook/main/approvals/a1`. */
  path: string;
  body: Buffer | string;
}

/** The request path of a request target (`/a/b?x=1` → `/a/b`), exactly as sent: nothing decoded. */
export function pathOf(target: string): string {
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}

/** The hex HMAC-SHA256 of `<timestamp>.<METHOD>.<path>.<body>` keyed with the secret. */
export function hmacHex(secret: string, timestamp: string | number, req: SignedRequest): string {
  return createHmac('sha256', secret).update(`${timestamp}.${req.method.toUpperCase()}.${req.path}.`).update(req.body).digest('hex');
}

/** The `X-Switchboard-Signature` value for a request sent at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, timestamp: string | number, req: SignedRequest): string {
  return `v2=${hmacHex(secret, timestamp, req)}`;
}

/**
 * Why a request was refused; `message` is safe to return to the caller (it never echoes a
 * secret). On success `mac` is the verified HMAC (lower-case hex): one per distinct signed
 * request, so it keys the replay memory.
 */
export type VerifyResult = { ok: true; mac: string; timestampMs: number } | { ok: false; code: 'unauthorized' | 'signature_version'; message: string };

const V2_HINT = 'v2=<hex HMAC-SHA256(secret, "<timestamp>.<METHOD>.<path>.<raw body>")>';

/**
 * Checks a signed request: the signature must be `v2=` (an older version is refused with
 * `signature_version`), the timestamp within `windowMs` of `nowMs` (past or future), and the
 * MAC must match the timestamp, method, path and raw body. The comparison is constant-time.
 */
export function verifyRequest(
  secret: string,
  headers: { timestamp: string | string[] | undefined; signature: string | string[] | undefined },
  req: SignedRequest,
  windowMs: number,
  nowMs: number = Date.now(),
): VerifyResult {
  const { timestamp, signature } = headers;
  if (typeof timestamp !== 'string' || typeof signature !== 'string') {
    return { ok: false, code: 'unauthorized', message: 'Missing X-Switchboard-Timestamp or X-Switchboard-Signature header.' };
  }
  const sig = signature.trim();
  if (OTHER_VERSION_RE.test(sig)) {
    return {
      ok: false,
      code: 'signature_version',
      message: `X-Switchboard-Signature ${sig.slice(0, sig.indexOf('='))} is not accepted: sign with ${V2_HINT}.`,
    };
  }
  if (!TIMESTAMP_RE.test(timestamp)) return { ok: false, code: 'unauthorized', message: 'X-Switchboard-Timestamp must be unix time in seconds.' };
  const timestampMs = Number(timestamp) * 1000;
  if (Math.abs(nowMs - timestampMs) > windowMs) {
    return { ok: false, code: 'unauthorized', message: 'X-Switchboard-Timestamp is outside the replay window.' };
  }
  const m = SIGNATURE_RE.exec(sig);
  const mac = hmacHex(secret, timestamp, req);
  const expected = Buffer.from(mac, 'hex');
  // A malformed header is compared against a zero buffer so both paths cost the same.
  const given = m ? Buffer.from(m[1]!, 'hex') : Buffer.alloc(expected.length);
  const same = timingSafeEqual(expected, given);
  if (!m || !same) {
    return { ok: false, code: 'unauthorized', message: `X-Switchboard-Signature does not match this request (expected ${V2_HINT}).` };
  }
  return { ok: true, mac, timestampMs };
}
