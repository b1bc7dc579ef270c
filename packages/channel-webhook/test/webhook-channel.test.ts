import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConversationRef, TurnEvent } from '@switchboard/core';
import { FakeChannelEnv } from '@switchboard/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { ReplayMemory } from '../src/replay-memory.js';
import { hmacHex, verifyRequest } from '../src/signing.js';
import { WebhookChannel } from '../src/webhook-channel.js';

const SECRET = 'unit-test-webhook-secret-0123456789';
const to: ConversationRef = { channel: 'webhook', account: 'main', id: 'dm-alice', kind: 'dm' };

let server: Server;
let url: string;
let received: Array<{ body: any; ok: boolean }>;
let statuses: number[];
/** The shared fake gateway (a real SQLite delivery ledger), fresh for each test. */
let env: FakeChannelEnv;

beforeEach(async () => {
  env = new FakeChannelEnv();
  received = [];
  statuses = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const signed = { method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, body: raw };
      const v = verifyRequest(SECRET, { timestamp: req.headers['x-switchboard-timestamp'], signature: req.headers['x-switchboard-signature'] }, signed, 60_000);
      received.push({ body: JSON.parse(raw.toString('utf8')), ok: v.ok });
      res.writeHead(statuses.shift() ?? 200, { 'content-type': 'application/json' }).end('{"messageId":"pm-1"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  // The query is not signed: the signature covers the callback URL's path only.
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cb?k=v`;
});
afterEach(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await env.close();
});

function channel(retries = 0): WebhookChannel {
  return new WebhookChannel({
    account: 'main',
    secret: SECRET,
    callbackUrl: url,
    replayWindowMs: 60_000,
    callbackRetries: retries,
    callbackRetryDelayMs: 1,
    callbackTimeoutMs: 2_000,
    maxBodyBytes: 4096,
    required: false,
    log: env.log,
  });
}

async function* events(...evs: TurnEvent[]): AsyncIterable<TurnEvent> {
  yield* evs;
}
const end = (text: string): TurnEvent => ({ type: 'turn_end', state: 'completed', reason: 'completed', text });

describe('WebhookChannel.render', () => {
  it('sends a signed final and ledgers it after the 2xx, with the platform message id', async () => {
    const ch = channel();
    await ch.start(env.contextFor(ch));
    await ch.render(to, 't1', events({ type: 'text_delta', text: 'hel' }, end('hello')), { clientId: 'm1', resumed: false });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ ok: true, body: { type: 'reply', id: 't1:0', turnId: 't1', replyTo: 'm1', text: 'hello', part: 0, final: true } });
    expect(await env.ledger('t1')).toMatchObject([{ turnId: 't1', part: 0, kind: 'final', platformMessageId: 'pm-1', conversationId: 'dm-alice' }]);
  });

  it('never re-sends a final already in the ledger (resume)', async () => {
    const ch = channel();
    await ch.start(env.contextFor(ch));
    await ch.render(to, 't2', events(end('once')), { clientId: 'm2', resumed: false });
    await ch.render(to, 't2', events({ type: 'attempt_reset', reason: 'resumed after restart' }, end('once')), { clientId: 'm2', resumed: true });
    expect(received).toHaveLength(1);
  });

  it('does not ledger a final the platform refused, so a resumed turn sends it again', async () => {
    const ch = channel(1);
    await ch.start(env.contextFor(ch));
    statuses.push(500, 500);
    await ch.render(to, 't3', events(end('later')), { clientId: 'm3', resumed: false });
    expect(received).toHaveLength(2);
    expect(await env.ledger('t3')).toHaveLength(0);
    expect(ch.health()).toMatchObject({ state: 'degraded', detail: expect.stringContaining('HTTP 500') });
    await ch.render(to, 't3', events(end('later')), { clientId: 'm3', resumed: true });
    expect(received).toHaveLength(3);
    expect(await env.ledger('t3')).toHaveLength(1);
    expect(ch.health().state).toBe('up');
  });

  it('gives up at once on a 4xx, keeps callbacks of one conversation in order, and stop() is idempotent', async () => {
    const ch = channel(3);
    await ch.start(env.contextFor(ch));
    statuses.push(400);
    await ch.notify(to, 'first');
    await ch.notify(to, 'second');
    await ch.render(to, 't4', events(end('third')), { clientId: null, resumed: false });
    expect(received.map((r) => r.body.text)).toEqual(['first', 'second', 'third']);
    await Promise.all([ch.stop(), ch.stop()]);
    expect(ch.health()).toEqual({ state: 'down', detail: 'stopped' });
    await ch.notify(to, 'after stop');
    expect(received).toHaveLength(3);
  });
});

describe('verifyRequest', () => {
  const body = Buffer.from('{"id":"1"}');
  const path = '/channels/webhook/main/approvals/a1';
  const req = (b: Buffer = body, p: string = path, method = 'POST') => ({ method, path: p, body: b });
  const now = 1_700_000_000_000;
  const sig = (ts: number, r = req()) => `v2=${hmacHex(SECRET, ts, r)}`;

  it('accepts a genuine request and refuses other bodies, paths, methods, secrets and malformed signatures', () => {
    const ts = now / 1000;
    const ok = verifyRequest(SECRET, { timestamp: String(ts), signature: sig(ts) }, req(), 300_000, now);
    expect(ok).toEqual({ ok: true, mac: hmacHex(SECRET, ts, req()), timestampMs: now });
    // The same MAC whatever the case of its hex digits: the replay memory keys on the verified value.
    expect(verifyRequest(SECRET, { timestamp: String(ts), signature: sig(ts).toUpperCase().replace('V2=', 'v2=') }, req(), 300_000, now)).toEqual(ok);
    expect(verifyRequest(SECRET, { timestamp: String(ts), signature: sig(ts) }, req(Buffer.from('{"id":"2"}')), 300_000, now).ok).toBe(false);
    expect(verifyRequest(SECRET, { timestamp: String(ts), signature: sig(ts) }, req(body, '/channels/webhook/main/approvals/a2'), 300_000, now).ok).toBe(false);
    expect(verifyRequest(SECRET, { timestamp: String(ts), signature: sig(ts) }, req(body, path, 'PUT'), 300_000, now).ok).toBe(false);
    expect(verifyRequest('another-secret', { timestamp: String(ts), signature: sig(ts) }, req(), 300_000, now).ok).toBe(false);
    expect(verifyRequest(SECRET, { timestamp: String(ts), signature: 'v2=abc' }, req(), 300_000, now)).toMatchObject({ ok: false, code: 'unauthorized' });
    expect(verifyRequest(SECRET, { timestamp: String(ts), signature: undefined }, req(), 300_000, now).ok).toBe(false);
  });

  it('refuses v1 (and any other version) with signature_version, even when its MAC is right', () => {
    const ts = now / 1000;
    const v1 = `v1=${createHmac('sha256', SECRET).update(`${ts}.`).update(body).digest('hex')}`;
    expect(verifyRequest(SECRET, { timestamp: String(ts), signature: v1 }, req(), 300_000, now)).toMatchObject({ ok: false, code: 'signature_version' });
    expect(verifyRequest(SECRET, { timestamp: String(ts), signature: sig(ts).replace('v2=', 'v3=') }, req(), 300_000, now)).toMatchObject({
      ok: false,
      code: 'signature_version',
    });
  });

  it('enforces the replay window in both directions', () => {
    for (const skew of [-300, 300])
      expect(verifyRequest(SECRET, { timestamp: String(now / 1000 + skew), signature: sig(now / 1000 + skew) }, req(), 300_000, now).ok).toBe(true);
    for (const skew of [-301, 301])
      expect(verifyRequest(SECRET, { timestamp: String(now / 1000 + skew), signature: sig(now / 1000 + skew) }, req(), 300_000, now).ok).toBe(false);
    expect(verifyRequest(SECRET, { timestamp: '1e9', signature: sig(now / 1000) }, req(), 300_000, now).ok).toBe(false);
  });
});

describe('ReplayMemory', () => {
  it('remembers until the window passes, forgets a failed attempt, and stays bounded', () => {
    const m = new ReplayMemory<string>(10);
    m.set('a', 'A', 1_000, 0);
    expect(m.get('a', 999)).toBe('A');
    expect(m.get('a', 1_001)).toBeUndefined();
    m.set('b', 'B', 1_000, 0);
    m.forget('b', 'other');
    expect(m.get('b', 0)).toBe('B');
    m.forget('b', 'B');
    expect(m.get('b', 0)).toBeUndefined();
    for (let i = 0; i < 100; i++) m.set(`k${i}`, String(i), 10_000, 0);
    expect(m.size).toBeLessThanOrEqual(10);
    expect(m.get('k99', 0)).toBe('99');
    expect(m.get('k0', 0)).toBeUndefined();
  });
});
