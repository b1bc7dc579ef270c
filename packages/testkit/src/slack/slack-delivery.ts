import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import type { SlackDeliverOptions, SlackDeliveryResult } from './fake-slack-types.js';

/** `v0=` + hex HMAC-SHA256 of `v0:{timestampSec}:{body}` keyed with the signing secret (Slack request signing). */
export function signSlackRequest(signingSecret: string, timestampSec: number | string, body: string): string {
  return `v0=${createHmac('sha256', signingSecret).update(`v0:${timestampSec}:${body}`).digest('hex')}`;
}

/** Alters a signed JSON body without breaking its JSON: the event (or payload) text gains a suffix. */
export function tamperSlackBody(body: string): string {
  if (body.startsWith('payload=')) {
    const payload = JSON.parse(new URLSearchParams(body).get('payload') ?? '{}') as Record<string, unknown>;
    payload.tampered = true;
    return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  }
  const parsed = JSON.parse(body) as Record<string, unknown>;
  const event = parsed.event as Record<string, unknown> | undefined;
  if (event && typeof event.text === 'string') event.text = `${event.text} (tampered)`;
  else parsed.tampered = true;
  return JSON.stringify(parsed);
}

/** A signed POST as Slack's Events API / interactivity delivery makes it. */
export interface SignedPost {
  url: string;
  body: string;
  contentType: string;
  signingSecret: string;
  opts: SlackDeliverOptions;
}

/**
 * Signs `body` (timestamp = now + skew), applies tampering / retry headers, POSTs it over a fresh
 * connection and returns the target's answer. Never exposes the signing secret.
 */
export function postSigned(p: SignedPost): Promise<SlackDeliveryResult> {
  const { opts } = p;
  const ts = Math.floor(Date.now() / 1000) + (opts.timestampSkewSec ?? 0);
  const signature = opts.signature ?? signSlackRequest(p.signingSecret, ts, p.body);
  const sent = opts.tamper === true ? tamperSlackBody(p.body) : typeof opts.tamper === 'function' ? opts.tamper(p.body) : p.body;
  const headers: Record<string, string> = {
    'content-type': p.contentType,
    'content-length': String(Buffer.byteLength(sent)),
    'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
    'x-slack-request-timestamp': String(ts),
    'x-slack-signature': signature,
    ...(opts.retryNum !== undefined ? { 'x-slack-retry-num': String(opts.retryNum) } : {}),
    ...(opts.retryReason !== undefined ? { 'x-slack-retry-reason': opts.retryReason } : {}),
    ...(opts.headers ?? {}),
  };
  const started = performance.now();
  return new Promise<SlackDeliveryResult>((resolve, reject) => {
    const req = request(p.url, { method: 'POST', headers, agent: false, timeout: opts.timeoutMs ?? 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: out,
          elapsedMs: Math.round(performance.now() - started),
          sentBody: sent,
        });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`fake-slack: delivery to ${p.url} timed out after ${opts.timeoutMs ?? 10_000} ms`)));
    req.on('error', reject);
    req.end(sent);
  });
}
