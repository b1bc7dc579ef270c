import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANARY_SLACK_BOT_TOKEN, CANARY_SLACK_SIGNING_SECRET, startFakeSlack, type FakeSlack } from '../../src/index.js';
import { silentLogger } from './silent-logger.js';

/** Bolt 5 (HTTPReceiver) receiving the fake's signed deliveries and answering through the fake Web API. */
let fake: FakeSlack;
let app: App;
let server: Server;
let url: string;
const gate = (() => {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
})();
const seen: Array<{ kind: string; ts?: string; retryNum?: number; retryReason?: string; user?: string }> = [];

beforeAll(async () => {
  fake = await startFakeSlack();
  const receiver = new HTTPReceiver({ signingSecret: CANARY_SLACK_SIGNING_SECRET, logger: silentLogger });
  app = new App({ token: CANARY_SLACK_BOT_TOKEN, receiver, logger: silentLogger, clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } } });
  app.event('app_mention', async ({ event, say, context }) => {
    seen.push({ kind: 'app_mention', ts: event.ts, retryNum: context.retryNum, retryReason: context.retryReason });
    if (event.text.includes('status?')) await gate.promise; // held until the test has seen the HTTP ack
    await say({ text: `re: ${event.text}`, thread_ts: event.ts });
  });
  app.message(async ({ message }) => {
    seen.push({
      kind: `message:${'subtype' in message && message.subtype ? message.subtype : 'plain'}`,
      ts: message.ts,
      user: 'user' in message ? message.user : undefined,
    });
  });
  app.action('approve', async ({ ack, body }) => {
    await ack();
    seen.push({ kind: 'action', user: body.user.id });
  });
  server = createServer(receiver.requestListener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await fake.close();
});

describe('Bolt 5 HTTPReceiver against the fake', () => {
  it('answers url_verification with the challenge (no listener involved)', async () => {
    const v = await fake.deliverUrlVerification(url);
    expect(v.status).toBe(200);
    expect(JSON.parse(v.body)).toEqual({ challenge: v.challenge });
  });

  it('acks an event before the listener finishes; the reply lands in the fake Web API', async () => {
    const ev = fake.events.appMention({ text: 'status?' });
    const r = await fake.deliverEvent(url, ev);
    expect(r.status).toBe(200); // acked while the listener is still blocked
    expect(fake.messages('C0CHAN0001').some((m) => m.thread_ts === ev.ts)).toBe(false);
    gate.release();
    const reply = await fake.waitFor(() => fake.messages('C0CHAN0001').find((m) => m.thread_ts === ev.ts), 5000, 'the threaded reply');
    expect(reply.text).toBe('re: <@U0BOT00001> status?');
    // Bolt's per-event client is built with the authorize result's teamId, so it sends team_id.
    expect(fake.callsTo('chat.postMessage').at(-1)!.params).toMatchObject({ team_id: 'T0TEST0001', thread_ts: ev.ts });
    // Bolt called auth.test once at construction (tokenVerificationEnabled defaults to true).
    expect(fake.callsTo('auth.test').length).toBeGreaterThanOrEqual(1);
  });

  it('rejects tampered and stale deliveries with 401, but accepts a future-dated timestamp', async () => {
    expect((await fake.deliverEvent(url, fake.events.appMention({ text: 't' }), { tamper: true })).status).toBe(401);
    expect((await fake.deliverEvent(url, fake.events.appMention({ text: 's' }), { timestampSkewSec: -301 })).status).toBe(401);
    expect((await fake.deliverEvent(url, fake.events.appMention({ text: 'w' }), { signingSecret: 'wrong' })).status).toBe(401);
    const before = seen.length;
    const future = fake.events.im({ text: 'from the future' });
    expect((await fake.deliverEvent(url, future, { timestampSkewSec: 600 })).status).toBe(200);
    await fake.waitFor(() => seen.slice(before).find((s) => s.ts === future.ts), 2000, 'the future-dated event to reach a listener');
  });

  it('exposes retries as context.retryNum / retryReason and does not dedupe them', async () => {
    const ev = fake.events.appMention({ text: 'once' });
    await fake.deliverEvent(url, ev);
    await fake.deliverEvent(url, ev, { retryNum: 1, retryReason: 'http_timeout' });
    const both = await fake.waitFor(
      () => {
        const hits = seen.filter((s) => s.ts === ev.ts);
        return hits.length === 2 && hits;
      },
      3000,
      'both deliveries',
    );
    expect(both.map((s) => s.retryNum)).toEqual([undefined, 1]);
    expect(both[1]!.retryReason).toBe('http_timeout');
  });

  it('one mention in a channel arrives twice (app_mention + message, same ts); other bots pass ignoreSelf, our own echo does not', async () => {
    const [mention, message] = fake.events.mentionPair({ text: 'double' });
    await fake.deliverEvent(url, mention);
    await fake.deliverEvent(url, message);
    const hits = await fake.waitFor(
      () => {
        const h = seen.filter((s) => s.ts === mention.ts);
        return h.length === 2 && h;
      },
      3000,
      'both events of the mention',
    );
    expect(hits.map((h) => h.kind).sort()).toEqual(['app_mention', 'message:plain']);

    const other = fake.events.botMessage({ text: 'beep' });
    const self = fake.events.selfMessage({ text: 'my own post' });
    await fake.deliverEvent(url, self);
    await fake.deliverEvent(url, other);
    await fake.waitFor(() => seen.some((s) => s.ts === other.ts), 3000, 'the other bot message');
    expect(seen.find((s) => s.ts === other.ts)!.kind).toBe('message:bot_message');
    expect(seen.some((s) => s.ts === self.ts)).toBe(false);
  });

  it('block_actions interactions reach app.action and are acked with 200', async () => {
    const r = await fake.deliverInteraction(url, fake.events.blockActions({ actionId: 'approve', value: 'yes' }));
    expect(r.status).toBe(200);
    await fake.waitFor(() => seen.some((s) => s.kind === 'action'), 2000, 'the action');
  });
});
