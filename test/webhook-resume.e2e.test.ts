import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CANARY_WEBHOOK_SECRET,
  startFakeAnthropic,
  startGateway,
  startWebhookPlatform,
  stopAllGateways,
  type FakeAnthropic,
  type GatewayProcess,
  type ReceivedCallback,
  type WebhookPlatform,
} from '@switchboard/testkit';

let fake: FakeAnthropic;
let platform: WebhookPlatform;
let gw: GatewayProcess;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  platform = await startWebhookPlatform();
  gw = await startGateway({
    modelUrl: fake.url,
    config: { channels: { webhook: { accounts: { main: { secret: CANARY_WEBHOOK_SECRET, callbackUrl: platform.callbackUrl, dmPolicy: 'allowlist', allowFrom: ['alice'] } } } } },
  });
});
afterAll(async () => {
  await stopAllGateways();
  await platform?.close();
  await fake?.close();
});

const replyTo = (id: string) => (c: ReceivedCallback) => c.body.type === 'reply' && c.body.replyTo === id;

describe('webhook replies across a crash', () => {
  it('a turn cut off by SIGKILL is answered once after the restart; re-sent message ids get no second reply', async () => {
    const done = platform.dm('alice', 'answered before the crash');
    await platform.send(gw, done);
    await platform.waitFor(replyTo(done.id));

    fake.enqueue({ holdAfterEvents: 4, text: 'This answer was cut off mid-stream.' });
    const m = platform.dm('alice', 'tell me something long');
    const calls = fake.requests.length;
    expect((await platform.send(gw, m)).status).toBe(202);
    await fake.waitForRequests(calls + 1);
    await gw.kill('SIGKILL');
    fake.release();
    expect(platform.callbacks.filter(replyTo(m.id))).toHaveLength(0);

    gw = await gw.restart();
    const reply = await platform.waitFor(replyTo(m.id), 20_000);
    expect(reply.body).toMatchObject({ text: 'echo: tell me something long', state: 'completed', final: true });
    expect(reply.verified).toBe(true);

    // The platform re-sends both ids (as a platform does when it never saw our 202): no new work, no new reply.
    const before = fake.requests.length;
    for (const again of [done, m]) expect((await platform.send(gw, again)).json).toMatchObject({ accepted: true, duplicate: true });
    const next = platform.dm('alice', 'still there?');
    await platform.send(gw, next);
    await platform.waitFor(replyTo(next.id));
    expect(fake.requests.length).toBe(before + 1);
    expect(platform.callbacks.filter(replyTo(done.id))).toHaveLength(1);
    expect(platform.callbacks.filter(replyTo(m.id))).toHaveLength(1);
  });
});
