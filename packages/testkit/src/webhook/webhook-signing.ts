import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * `v2=` + hex HMAC-SHA256 of `<timestampSec>.<METHOD>.<path>.<body>` keyed with the account
 * secret — the Switchboard webhook signature, written independently of the channel package so
 * tests check the wire format rather than share its code. `path` is the request path as sent,
 * without the query string.
 */
export function signWebhookRequest(secret: string, timestampSec: number | string, method: string, path: string, body: string | Buffer): string {
  return `v2=${createHmac('sha256', secret).update(`${timestampSec}.${method}.${path}.`).update(body).digest('hex')}`;
}

/** Whether a callback's `X-Switchboard-Signature` matches its timestamp, method, path and raw body (constant-time). */
export function verifyWebhookSignature(
  secret: string,
  timestampSec: string | undefined,
  signature: string | undefined,
  method: string,
  path: string,
  body: Buffer,
): boolean {
  if (!timestampSec || !signature || !/^\d+$/.test(timestampSec)) return false;
  const expected = Buffer.from(signWebhookRequest(secret, timestampSec, method, path, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Alters a signed JSON body without breaking its JSON: the `text` field gains a suffix (else a field is added). */
export function tamperWebhookBody(body: string): string {
  const parsed = JSON.parse(body) as Record<string, unknown>;
  if (typeof parsed.text === 'string') parsed.text = `${parsed.text} (tampered)`;
  else parsed.tampered = true;
  return JSON.stringify(parsed);
}
