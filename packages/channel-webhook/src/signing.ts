import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the request's unix time in seconds. */
export const TIMESTAMP_HEADER = 'x-switchboard-timestamp';
/** Header carrying `v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`. */
export const SIGNATURE_HEADER = 'x-switchboard-signature';

const SIGNATURE_RE = /^v1=([0-9a-fA-F]{64})$/;
const TIMESTAMP_RE = /^\d{1,12}$/;

/** The hex HMAC-SHA256 of `<timestamp>.<body>` keyed with the secret. */
export function hmacHex(secret: string, timestamp: string | number, body: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/** The `X-Switchboard-Signature` value for a body sent at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, timestamp: string | number, body: Buffer | string): string {
  return `v1=${hmacHex(secret, timestamp, body)}`;
}

/** Why a request was refused; `message` is safe to return to the caller (it never echoes a secret). */
export type VerifyResult = { ok: true } | { ok: false; message: string };

/**
 * Checks a signed request: the timestamp must be within `windowMs` of `nowMs` (past or future)
 * and the signature must match the raw body. The comparison is constant-time.
 */
export function verifyRequest(
  secret: string,
  headers: { timestamp: string | string[] | undefined; signature: string | string[] | undefined },
  rawBody: Buffer,
  windowMs: number,
  nowMs: number = Date.now(),
): VerifyResult {
  const { timestamp, signature } = headers;
  if (typeof timestamp !== 'string' || typeof signature !== 'string') {
    return { ok: false, message: 'Missing X-Switchboard-Timestamp or X-Switchboard-Signature header.' };
  }
  if (!TIMESTAMP_RE.test(timestamp)) return { ok: false, message: 'X-Switchboard-Timestamp must be unix time in seconds.' };
  if (Math.abs(nowMs - Number(timestamp) * 1000) > windowMs) {
    return { ok: false, message: 'X-Switchboard-Timestamp is outside the replay window.' };
  }
  const m = SIGNATURE_RE.exec(signature.trim());
  const expected = Buffer.from(hmacHex(secret, timestamp, rawBody), 'hex');
  // A malformed header is compared against a zero buffer so both paths cost the same.
  const given = m ? Buffer.from(m[1]!, 'hex') : Buffer.alloc(expected.length);
  const same = timingSafeEqual(expected, given);
  if (!m || !same) return { ok: false, message: 'X-Switchboard-Signature does not match the body (expected v1=<hex HMAC-SHA256>).' };
  return { ok: true };
}
