import { describe, expect, it } from 'vitest';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

const env = useWebhookGateway({ main: { dmPolicy: 'allowlist', allowFrom: ['alice'] } });

describe('webhook replies across a crash', () => {
  it('a turn cut off by SIGKILL is answered once after the restart; re-sent message ids get no second reply', async () => {
    const { fake, platform } = env;
    const done = platform.dm('alice', 'answered before the crash');
    await platform.send(env.gw, done);
    await platform.waitFor(replyTo(done.id));

    fake.enqueue({ holdAfterEvents: 4, text: 'This answer was cut off mid-stream.' });
    const m = platform.dm('alice', 'tell me something long');
    const calls = fake.requests.length;
    expect((await platform.send(env.gw, m)).status).toBe(202);
    await fake.waitForRequests(calls + 1);
    await env.gw.kill('SIGKILL');
    fake.release();
    expect(platform.callbacks.filter(replyTo(m.id))).toHaveLength(0);

    env.gw = await env.gw.restart();
    const reply = await platform.waitFor(replyTo(m.id), 20_000);
    expect(reply.body).toMatchObject({ text: 'echo: tell me something long', state: 'completed', final: true });
    expect(reply.verified).toBe(true);

    // The platform re-sends both ids (as a platform does when it never saw our 202): no new work, no new reply.
    const before = fake.requests.length;
    for (const again of [done, m]) expect((await platform.send(env.gw, again)).json).toMatchObject({ accepted: true, duplicate: true });
    const next = platform.dm('alice', 'still there?');
    await platform.send(env.gw, next);
    await platform.waitFor(replyTo(next.id));
    expect(fake.requests.length).toBe(before + 1);
    expect(platform.callbacks.filter(replyTo(done.id))).toHaveLength(1);
    expect(platform.callbacks.filter(replyTo(m.id))).toHaveLength(1);
  });
});
