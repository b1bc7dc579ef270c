import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CANARY_WEBHOOK_SECRET, type ReceivedCallback } from '@switchboard/testkit';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

// Point 16 of issue 10: the signature covers method, path and body (v2), so a signed decision
// cannot be moved onto another approval; v1 is refused; replays inside the window are answered
// without acting twice (a message gets its original result, an approval decision 409 `replayed`).

const env = useWebhookGateway({ main: { replayWindow: '5m', dmPolicy: 'allowlist', allowFrom: ['alice'] } });

const approvalFor = (messageId: string) => (c: ReceivedCallback) => c.body.type === 'approval_request' && c.body.replyTo === messageId;

describe('webhook signatures and replays', () => {
  it('a captured signed "allow" replayed onto a different approval is refused, and that approval stays pending', async () => {
    const { fake, gw, platform } = env;
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'harmless.txt', content: 'ok' }, id: 'toolu_rp1' }] },
      { toolUses: [{ name: 'write_file', input: { path: 'evil.txt', content: 'pwned' }, id: 'toolu_rp2' }] },
      { text: 'Both done.' },
    );
    const m = platform.dm('alice', 'write two files');
    expect((await platform.send(gw, m)).status).toBe(202);
    const first = await platform.waitFor(approvalFor(m.id));
    const ok = await platform.decide(gw, first.body.approvalId as string, { decision: 'allow', senderId: 'alice' });
    expect(ok.json).toMatchObject({ outcome: 'decided', status: 'allowed' });
    const captured = platform.lastRequest!;

    // The second approval: the attacker replays the captured request, changing only the path.
    const second = await platform.waitForCount(approvalFor(m.id), 2).then((hits) => hits[1]!);
    const secondId = second.body.approvalId as string;
    expect(secondId).not.toBe(first.body.approvalId);
    const target = captured.url.replace(encodeURIComponent(first.body.approvalId as string), encodeURIComponent(secondId));
    expect(target).not.toBe(captured.url);
    const attack = await platform.replay(captured, target);
    expect(attack.status).toBe(401);
    expect(attack.json.code).toBe('unauthorized');
    expect(attack.json.message).toMatch(/X-Switchboard-Signature/);

    // Still pending: the person's own deny decides it, and the file was never written.
    const deny = await platform.decide(gw, secondId, { decision: 'deny', senderId: 'alice' });
    expect(deny.json).toMatchObject({ outcome: 'decided', status: 'denied' });
    const reply = await platform.waitFor(replyTo(m.id));
    expect(reply.body.state).toBe('completed');
    const results = (fake.requests.at(-1)!.body.messages as Array<{ content: unknown }>).flatMap((msg) => (Array.isArray(msg.content) ? msg.content : []));
    const denied = results.find((b: { type?: string; tool_use_id?: string }) => b.type === 'tool_result' && b.tool_use_id === 'toolu_rp2');
    expect(denied).toMatchObject({ is_error: true, content: expect.stringMatching(/declined/) });
    const resolved = platform.callbacks.filter((c) => c.body.type === 'approval_resolved' && c.body.approvalId === secondId);
    expect(resolved.map((c) => c.body.allowed)).toEqual([false]);
  });

  it('refuses a v1 signature with 401 signature_version, before any model call', async () => {
    const { fake, gw, platform } = env;
    const calls = fake.requests.length;
    const m = platform.dm('alice', 'old signer');
    const body = JSON.stringify(m);
    const ts = Math.floor(Date.now() / 1000);
    const v1 = `v1=${createHmac('sha256', CANARY_WEBHOOK_SECRET).update(`${ts}.`).update(body).digest('hex')}`;
    const res = await platform.send(gw, m, { signature: v1, headers: { 'x-switchboard-timestamp': String(ts) } });
    expect(res.status).toBe(401);
    expect(res.json.code).toBe('signature_version');
    expect(res.json.message).toMatch(/v2=/);
    expect(res.text).not.toContain(CANARY_WEBHOOK_SECRET);
    // A v2-signed message after it is answered, and the v1 one never reached the model.
    const next = platform.dm('alice', 'new signer');
    expect((await platform.send(gw, next)).status).toBe(202);
    await platform.waitFor(replyTo(next.id));
    expect(fake.requests.length).toBe(calls + 1);
    expect(JSON.stringify(fake.requests.map((r) => r.body.messages))).not.toContain('old signer');
  });

  it('a replayed message request answers 200 with the original accept result and is answered once', async () => {
    const { fake, gw, platform } = env;
    const calls = fake.requests.length;
    const m = platform.dm('alice', 'say it once');
    const first = await platform.send(gw, m);
    expect(first.status).toBe(202);
    const captured = platform.lastRequest!;
    const again = await platform.replay(captured);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    await platform.waitFor(replyTo(m.id));
    // A later message's reply comes after any second reply to the replayed one would have.
    const next = platform.dm('alice', 'and then this');
    await platform.send(gw, next);
    await platform.waitFor(replyTo(next.id));
    expect(platform.callbacks.filter(replyTo(m.id))).toHaveLength(1);
    expect(fake.requests.length).toBe(calls + 2);
  });

  it('a replayed approval decision answers 409 replayed', async () => {
    const { fake, gw, platform } = env;
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'once.txt', content: '1' }, id: 'toolu_rp3' }] }, { text: 'Written once.' });
    const m = platform.dm('alice', 'write once');
    await platform.send(gw, m);
    const req = await platform.waitFor(approvalFor(m.id));
    const approvalId = req.body.approvalId as string;
    const ok = await platform.decide(gw, approvalId, { decision: 'allow', senderId: 'alice' });
    expect(ok.status).toBe(200);
    const again = await platform.replay(platform.lastRequest!);
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ code: 'replayed' });
    expect(again.json.message).toMatch(/replay/i);
    await platform.waitFor(replyTo(m.id));
  });

  it('after a restart within the window (the replay memory is gone), replays stay harmless', async () => {
    const { fake, platform } = env;
    const m = platform.dm('alice', 'before the restart');
    const first = await platform.send(env.gw, m);
    const message = platform.lastRequest!;
    await platform.waitFor(replyTo(m.id));
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'restart.txt', content: '1' }, id: 'toolu_rp4' }] },
      { text: 'Written before the restart.' },
    );
    const w = platform.dm('alice', 'write before the restart');
    await platform.send(env.gw, w);
    const req = await platform.waitFor(approvalFor(w.id));
    expect((await platform.decide(env.gw, req.body.approvalId as string, { decision: 'allow', senderId: 'alice' })).status).toBe(200);
    const decision = platform.lastRequest!;
    await platform.waitFor(replyTo(w.id));

    const before = env.gw.url;
    env.gw = await env.gw.restart();
    const calls = fake.requests.length;
    // The message id is deduped durably; the signed decision names one approval, decided once.
    const again = await platform.replay(message, message.url.replace(before, env.gw.url));
    expect(again.status).toBe(202);
    expect(again.json).toMatchObject({ duplicate: true, turnId: first.json.turnId });
    const twice = await platform.replay(decision, decision.url.replace(before, env.gw.url));
    expect(twice.status).toBe(409);
    expect(twice.json).toMatchObject({ outcome: 'already_decided' });
    const next = platform.dm('alice', 'after the restart');
    await platform.send(env.gw, next);
    await platform.waitFor(replyTo(next.id));
    expect(platform.callbacks.filter(replyTo(m.id))).toHaveLength(1);
    expect(fake.requests.length).toBe(calls + 1);
  });
});
