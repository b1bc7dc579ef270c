import { describe, expect, it } from 'vitest';
import { api, CANARY_WEBHOOK_SECRET, type ReceivedCallback } from '@switchboard/testkit';
import { useWebhookGateway } from './webhook-helpers.js';

const env = useWebhookGateway({ main: { dmPolicy: 'pairing' } });

const CODE = /pairing code (?:is )?([A-Z0-9]{8})\b/;
const noticeTo = (sender: string, match: RegExp) => (c: ReceivedCallback) =>
  c.body.type === 'notice' && c.body.conversation?.id === `dm-${sender}` && match.test(c.body.text as string);
const codeOf = (c: ReceivedCallback) => CODE.exec(c.body.text as string)?.[1] ?? '';
const pending = async () =>
  (await api(env.gw, 'GET', '/api/v1/pairing?channel=webhook:main', { token: env.gw.credentials().operatorToken })).json.requests as Array<{
    code: string;
    identity: string;
    heldMessages: number;
  }>;

describe('webhook pairing (dmPolicy "pairing")', () => {
  const codes: Record<string, string> = {};
  const held: Record<string, string> = {};

  it('holds an unknown sender’s message and sends them a pairing code; the model sees nothing', async () => {
    const { fake, gw, platform } = env;
    const m = platform.dm('u1', 'hello, is anyone there?', { sender: { id: 'u1', name: 'User One' } });
    const res = await platform.send(gw, m);
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: true, gate: 'pairing', duplicate: false, turnId: null });
    const notice = await platform.waitFor(noticeTo('u1', CODE));
    codes.u1 = codeOf(notice);
    expect(codes.u1).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    expect(notice.verified).toBe(true);
    expect(notice.body).toMatchObject({ account: 'main', conversation: { id: 'dm-u1', kind: 'dm' } });
    expect(await pending()).toEqual([expect.objectContaining({ code: codes.u1, identity: 'webhook:u1', heldMessages: 1 })]);
    expect(fake.requests).toHaveLength(0);
  });

  it('a repeat message from the same sender is held under the same code (no new code)', async () => {
    const { gw, platform } = env;
    const res = await platform.send(gw, platform.dm('u1', 'hello again'));
    expect(res.json.gate).toBe('held');
    const notice = await platform.waitFor(noticeTo('u1', /Still waiting/));
    expect(notice.body.text).toContain(codes.u1);
    expect(await pending()).toEqual([expect.objectContaining({ code: codes.u1, heldMessages: 2 })]);
    expect(platform.callbacks.filter(noticeTo('u1', /Your pairing code is/))).toHaveLength(1);
  });

  it('senders 2, 3 and 4 get their own codes (pairing.maxPending is 20 by default)', async () => {
    const { fake, gw, platform } = env;
    for (const s of ['u2', 'u3', 'u4']) {
      const m = platform.dm(s, s === 'u4' ? 'me too' : `hi from ${s}`);
      held[s] = m.id;
      expect((await platform.send(gw, m)).json.gate).toBe('pairing');
      codes[s] = codeOf(await platform.waitFor(noticeTo(s, CODE)));
      expect(codes[s]).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    }
    expect(new Set(Object.values(codes)).size).toBe(4);
    expect((await pending()).map((p) => p.code).sort()).toEqual([codes.u1, codes.u2, codes.u3, codes.u4].sort());
    expect(fake.requests).toHaveLength(0);
  });

  it('an operator approves a code: the held message is answered, and later messages too', async () => {
    const { fake, gw, platform } = env;
    const { operatorToken } = gw.credentials();
    const approved = await api(gw, 'POST', `/api/v1/pairing/${codes.u2}/approve`, { token: operatorToken, body: {} });
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({ outcome: 'approved', answered: 1 });
    await platform.waitFor(noticeTo('u2', /approved/));
    const reply = await platform.waitFor((c) => c.body.type === 'reply' && c.body.replyTo === held.u2);
    expect(reply.body).toMatchObject({ text: 'echo: hi from u2', final: true, part: 0, state: 'completed', conversation: { id: 'dm-u2', kind: 'dm' } });
    expect(reply.verified).toBe(true);

    const later = platform.dm('u2', 'and a follow-up');
    const res = await platform.send(gw, later);
    expect(res.json).toMatchObject({ gate: 'admitted', duplicate: false });
    const second = await platform.waitFor((c) => c.body.type === 'reply' && c.body.replyTo === later.id);
    expect(second.body.text).toBe('echo: and a follow-up');
    // The model saw u2's two messages and nothing from the senders still waiting.
    const said = fake.requests.map((r) => JSON.stringify(r.body.messages));
    expect(said).toHaveLength(2);
    expect(said.join('\n')).not.toMatch(/u1|is anyone there|hello again|hi from u3|me too/);
    // Approving twice is refused.
    expect((await api(gw, 'POST', `/api/v1/pairing/${codes.u2}/approve`, { token: operatorToken, body: {} })).status).toBe(409);
  });

  it('signs every callback and never logs the secret or a signature', () => {
    const { gw, platform } = env;
    expect(platform.callbacks.length).toBeGreaterThan(0);
    expect(platform.callbacks.every((c) => c.verified && c.status === 200)).toBe(true);
    const logs = gw.logs().join('\n');
    expect(logs).not.toContain(CANARY_WEBHOOK_SECRET);
    expect(logs).not.toMatch(/v[12]=[0-9a-f]{64}/);
  });
});
