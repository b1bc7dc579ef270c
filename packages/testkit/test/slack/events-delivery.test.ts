import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANARY_SLACK_SIGNING_SECRET, signSlackRequest, startFakeSlack, type FakeSlack } from '../../src/index.js';

const SECRET = CANARY_SLACK_SIGNING_SECRET;

/** An independent verifier (not the fake's code): node:crypto HMAC, constant-time compare, |now - ts| <= 300 s. */
function verify(secret: string, headers: IncomingMessage['headers'], raw: string): 'ok' | 'stale' | 'bad_signature' | 'missing' {
  const ts = headers['x-slack-request-timestamp'];
  const sig = headers['x-slack-signature'];
  if (typeof ts !== 'string' || typeof sig !== 'string') return 'missing';
  if (Math.abs(Math.floor(Date.now() / 1000) - Number(ts)) > 300) return 'stale';
  const expected = Buffer.from(`v0=${createHmac('sha256', secret).update(`v0:${ts}:${raw}`).digest('hex')}`);
  const got = Buffer.from(sig);
  return got.length === expected.length && timingSafeEqual(got, expected) ? 'ok' : 'bad_signature';
}

interface Captured {
  headers: IncomingMessage['headers'];
  raw: string;
  verdict: ReturnType<typeof verify>;
}

let fake: FakeSlack;
let target: Server;
let targetUrl: string;
const captured: Captured[] = [];
let respond: (c: Captured, res: ServerResponse) => void = (_c, res) => res.end();

beforeAll(async () => {
  fake = await startFakeSlack();
  target = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    const c = { headers: req.headers, raw, verdict: verify(SECRET, req.headers, raw) };
    captured.push(c);
    respond(c, res);
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/slack/events`;
});
afterAll(async () => {
  target.closeAllConnections();
  await new Promise<void>((r) => target.close(() => r()));
  await fake.close();
});

describe('signed Events API deliveries checked by an independent verifier', () => {
  it('signSlackRequest matches a hand-computed HMAC', () => {
    const body = '{"a":1}';
    const hex = createHmac('sha256', 'shh').update('v0:1700000000:{"a":1}').digest('hex');
    expect(signSlackRequest('shh', 1700000000, body)).toBe(`v0=${hex}`);
  });

  it('deliverEvent POSTs the real event_callback envelope, correctly signed', async () => {
    const ev = fake.events.im({ text: 'hello bot' });
    const r = await fake.deliverEvent(targetUrl, ev);
    const c = captured.at(-1)!;
    expect(r.status).toBe(200);
    expect(c.verdict).toBe('ok');
    expect(c.headers['content-type']).toBe('application/json');
    expect(c.headers['x-slack-retry-num']).toBeUndefined();
    const body = JSON.parse(c.raw);
    expect(body).toMatchObject({
      token: 'fake-verification-token',
      team_id: 'T0TEST0001',
      api_app_id: 'A0TEST0001',
      type: 'event_callback',
      event_id: r.eventId,
      authorizations: [{ team_id: 'T0TEST0001', user_id: 'U0BOT00001', is_bot: true }],
      event: { type: 'message', channel_type: 'im', channel: 'D0DM000001', text: 'hello bot', user: 'U0USER0001', ts: ev.ts },
    });
    expect(body.event_time).toBeGreaterThan(1_700_000_000);
    expect(ev.ts).toMatch(/^1710000000\.\d{6}$/);
  });

  it('retry headers, a stale or future timestamp, tampering and a wrong secret are all detectable', async () => {
    await fake.deliverEvent(targetUrl, fake.events.im({ text: 'again' }), { retryNum: 1, retryReason: 'http_timeout' });
    expect(captured.at(-1)!.headers).toMatchObject({ 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' });
    expect(captured.at(-1)!.verdict).toBe('ok');
    await fake.deliverEvent(targetUrl, fake.events.im({ text: 'old' }), { timestampSkewSec: -301 });
    expect(captured.at(-1)!.verdict).toBe('stale');
    await fake.deliverEvent(targetUrl, fake.events.im({ text: 'future' }), { timestampSkewSec: 400 });
    expect(captured.at(-1)!.verdict).toBe('stale');
    const t = await fake.deliverEvent(targetUrl, fake.events.im({ text: 'pay 10' }), { tamper: true });
    expect(captured.at(-1)!.verdict).toBe('bad_signature');
    expect(JSON.parse(captured.at(-1)!.raw).event.text).toBe('pay 10 (tampered)');
    expect(t.sentBody).toBe(captured.at(-1)!.raw);
    await fake.deliverEvent(targetUrl, fake.events.im({ text: 'x' }), { tamper: (b) => `${b} ` });
    expect(captured.at(-1)!.verdict).toBe('bad_signature');
    await fake.deliverEvent(targetUrl, fake.events.im({ text: 'x' }), { signingSecret: 'another-secret' });
    expect(captured.at(-1)!.verdict).toBe('bad_signature');
  });

  it('returns the target status, body and elapsed time', async () => {
    respond = (_c, res) => setTimeout(() => res.writeHead(503, { 'x-slack-no-retry': '1' }).end('busy'), 300);
    try {
      const r = await fake.deliverEvent(targetUrl, fake.events.im({ text: 'slow' }));
      expect(r).toMatchObject({ status: 503, body: 'busy' });
      expect(r.headers['x-slack-no-retry']).toBe('1');
      expect(r.elapsedMs).toBeGreaterThanOrEqual(290);
    } finally {
      respond = (_c, res) => res.end();
    }
  });

  it('url_verification carries a challenge; interactions are form-encoded payload= and signed over the raw form', async () => {
    respond = (c, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: JSON.parse(c.raw).challenge }));
    const v = await fake.deliverUrlVerification(targetUrl, SECRET);
    expect(JSON.parse(captured.at(-1)!.raw)).toEqual({ token: 'fake-verification-token', challenge: v.challenge, type: 'url_verification' });
    expect(JSON.parse(v.body)).toEqual({ challenge: v.challenge });
    respond = (_c, res) => res.end();

    await fake.deliverInteraction(targetUrl, fake.events.blockActions({ actionId: 'approve', value: 'run-1' }), SECRET);
    const c = captured.at(-1)!;
    expect(c.verdict).toBe('ok');
    expect(c.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(c.raw.startsWith('payload=')).toBe(true);
    const payload = JSON.parse(new URLSearchParams(c.raw).get('payload')!);
    expect(payload).toMatchObject({ type: 'block_actions', actions: [{ action_id: 'approve', value: 'run-1', type: 'button' }], user: { id: 'U0USER0001' } });
  });

  it('event builders: mention pair shares channel+ts, threads, bot and self messages', () => {
    const [mention, message] = fake.events.mentionPair({ text: 'summarize' });
    expect(mention).toMatchObject({ type: 'app_mention', text: '<@U0BOT00001> summarize', channel: 'C0CHAN0001' });
    expect(message).toMatchObject({ type: 'message', channel_type: 'channel', text: '<@U0BOT00001> summarize', channel: 'C0CHAN0001' });
    expect(message.ts).toBe(mention.ts);
    const reply = fake.events.threadReply({ text: 'more', threadTs: mention.ts as string });
    expect(reply).toMatchObject({ thread_ts: mention.ts, channel_type: 'channel' });
    expect(reply.ts).not.toBe(mention.ts);
    expect(fake.events.botMessage({ text: 'beep' })).toMatchObject({ subtype: 'bot_message', bot_id: 'B0OTHER001' });
    expect(fake.events.botMessage({ text: 'beep' })).not.toHaveProperty('user');
    expect(fake.events.selfMessage({ text: 'mine' })).toMatchObject({ user: 'U0BOT00001', bot_id: 'B0BOT00001' });
    expect(fake.events.selfMessage({ text: 'mine' })).not.toHaveProperty('subtype');
  });
});
