import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's replay window: requests whose timestamp is further than this from now are refused. */
export const SLACK_TIMESTAMP_WINDOW_SEC = 300;

/** Why a request failed verification (never echoes the signature or the secret). */
export type SignatureFailure = 'missing_headers' | 'bad_timestamp' | 'stale_timestamp' | 'bad_signature';

/**
 * Verifies Slack's v0 request signature: `v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{raw body}`,
 * compared in constant time, and a timestamp within ±5 minutes of now (Bolt only checks the past;
 * a future-dated request is a replay risk too). Returns null when the request is genuine.
 */
export function verifySlackSignature(
  signingSecret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  rawBody: Buffer,
  nowMs = Date.now(),
): SignatureFailure | null {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature) return 'missing_headers';
  if (!/^\d{1,12}$/.test(timestamp)) return 'bad_timestamp';
  if (Math.abs(Math.floor(nowMs / 1000) - Number(timestamp)) > SLACK_TIMESTAMP_WINDOW_SEC) return 'stale_timestamp';
  if (!signature.startsWith('v0=')) return 'bad_signature';
  const expected = createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest();
  const given = Buffer.from(signature.slice(3), 'hex');
  // A wrong length is refused without comparing; timingSafeEqual needs equal lengths.
  if (given.length !== expected.length) return 'bad_signature';
  return timingSafeEqual(given, expected) ? null : 'bad_signature';
}
