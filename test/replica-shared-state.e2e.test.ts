import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  connectWs,
  type GatewayProcess,
  type PgServer,
  type Replicas,
  type ReceivedCallback,
  startPostgres,
  startReplicas,
  startWebhookPlatform,
  type WebhookPlatform,
} from '@switchboard/testkit';
import { useFakeModel } from './helpers.js';
import { signIn, withCookie } from './console-helpers.js';
import { replyTo, webhookAccount } from './webhook-helpers.js';

// Issue 20: state a single gateway keeps in memory is shared by replicas on PostgreSQL — the
// webhook channel's replay memory, the console's sessions, the OpenAI channel's dedupe window.

const ORIGIN = 'http://console.replicas.test';
const model = useFakeModel();
let pg: PgServer;
let platform: WebhookPlatform;
let replicas: Replicas;
let a: GatewayProcess;
let b: GatewayProcess;

beforeAll(async () => {
  pg = await startPostgres();
  platform = await startWebhookPlatform({ account: 'main' });
  replicas = await startReplicas({
    count: 2,
    pg: await pg.createDatabase(),
    modelUrl: model.fake.url,
    config: {
      console: { publicOrigin: ORIGIN },
      channels: {
        webhook: { accounts: { main: webhookAccount(platform, { replayWindow: '5m', dmPolicy: 'allowlist', allowFrom: ['alice'] }) } },
        openai: { accounts: { default: {} } },
      },
    },
  });
  [a, b] = [replicas.at(0), replicas.at(1)];
}, 120_000);

afterAll(async () => {
  await replicas?.close();
  await platform?.close();
  await pg?.destroy();
});

const op = () => replicas.credentials().operatorToken;
const approvalFor = (messageId: string) => (c: ReceivedCallback) => c.body.type === 'approval_request' && c.body.replyTo === messageId;

describe('the webhook replay memory is shared', () => {
  it('a signed message replayed to the other replica gets the original answer; a signed decision replayed there is refused as a replay', async () => {
    const { fake } = model;
    const calls = fake.requests.length;
    const m = platform.dm('alice', 'said once, to A');
    const first = await platform.send(a, m);
    expect(first.status).toBe(202);
    const again = await platform.replay(platform.lastRequest!, platform.lastRequest!.url.replace(a.url, b.url));
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    await platform.waitFor(replyTo(m.id));

    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'replay.txt', content: '1' }, id: 'toolu_rs1' }] }, { text: 'Written once.' });
    const w = platform.dm('alice', 'write it');
    await platform.send(a, w);
    const req = await platform.waitFor(approvalFor(w.id));
    expect((await platform.decide(a, req.body.approvalId as string, { decision: 'allow', senderId: 'alice' })).status).toBe(200);
    const twice = await platform.replay(platform.lastRequest!, platform.lastRequest!.url.replace(a.url, b.url));
    expect(twice.status).toBe(409);
    expect(twice.json).toMatchObject({ code: 'replayed' });
    await platform.waitFor(replyTo(w.id));
    expect(platform.callbacks.filter(replyTo(m.id))).toHaveLength(1);
    expect(fake.requests.length - calls).toBe(3);
  });
});

describe('console sessions are shared', () => {
  it('a session opened through A works on B; signing out through B ends it on A and closes its web chat socket there', async () => {
    const p = await api(a, 'POST', '/api/v1/principals', { token: op(), body: { name: 'wc-replica', role: 'member' } });
    const t = await api(a, 'POST', '/api/v1/tokens', { token: op(), body: { kind: 'client', principalId: p.json.principal.id } });
    const s = await signIn(a, t.json.secret as string);
    const onB = await withCookie(b, 'GET', '/api/v1/auth/session', s);
    expect(onB.status).toBe(200);
    expect(onB.json).toMatchObject({ principalId: p.json.principal.id });
    const socket = await connectWs(a.wsUrl, { headers: { cookie: s.cookie }, origin: ORIGIN });
    expect(await socket.next((f) => f.type === 'hello_ok')).toMatchObject({ principalId: p.json.principal.id });

    expect((await withCookie(b, 'DELETE', '/api/v1/auth/session', s)).status).toBe(204);
    expect(await socket.waitClose(10_000)).toMatchObject({ code: 1008, reason: 'signed out' });
    expect((await withCookie(a, 'GET', '/api/v1/auth/session', s)).status).toBe(401);
    expect((await withCookie(b, 'GET', '/api/v1/auth/session', s)).status).toBe(401);
  });
});

describe('the OpenAI dedupe window is shared', () => {
  it('the same request without an Idempotency-Key sent to B after A answered it is the same turn, answered from the ledger', async () => {
    const { fake } = model;
    const token = replicas.credentials().clientToken;
    const body = { model: 'default', messages: [{ role: 'user', content: 'one answer, two replicas' }] };
    const post = (gw: GatewayProcess) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as { id: string; choices: Array<{ message: { content: string } }> } }));
    const calls = fake.requests.length;
    const first = await post(a);
    expect(first.status).toBe(200);
    const second = await post(b);
    expect(second.status).toBe(200);
    expect(second.json.id).toBe(first.json.id);
    expect(second.json.choices[0]!.message.content).toBe(first.json.choices[0]!.message.content);
    expect(fake.requests.length - calls).toBe(1);
  });

  it('a request waiting on B for a turn that runs on A is answered by A’s render (text, approval comments, the ledgered answer)', async () => {
    const { fake } = model;
    const token = replicas.credentials().clientToken;
    const body = (stream: boolean) => JSON.stringify({ model: 'default', stream, messages: [{ role: 'user', content: 'write it, then say so' }] });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'openai-replicas.txt', content: 'x' }, id: 'toolu_oarep' }] }, { text: 'Written on A.' });
    const onA = fetch(`${a.url}/v1/chat/completions`, { method: 'POST', headers, body: body(false) });
    // The turn runs on A and waits for the approval.
    await a.waitForLog((l) => l.includes('openai: a request waits for an approval'), 20_000);
    const pending = (await api(a, 'GET', '/api/v1/approvals?status=pending', { token: op() })).json.approvals as Array<{ id: string }>;
    expect(pending).toHaveLength(1);
    // The same request (no Idempotency-Key) sent to B: the shared window makes it the same turn; B's stream is open once its headers arrived.
    const onB = await fetch(`${b.url}/v1/chat/completions`, { method: 'POST', headers, body: body(true) });
    expect(onB.status).toBe(200);
    expect((await api(b, 'POST', `/api/v1/approvals/${pending[0]!.id}/decision`, { token: op(), body: { decision: 'allow' } })).status).toBe(200);
    const answerA = (await (await onA).json()) as { id: string; choices: Array<{ message: { content: string } }> };
    expect(answerA.choices[0]!.message.content).toBe('Written on A.');
    const raw = await onB.text();
    const streamed = raw
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)) as { id: string; choices: Array<{ delta?: { content?: string } }> });
    expect(streamed.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Written on A.');
    expect(streamed[0]!.id).toBe(answerA.id);
    expect(raw).toContain(`: approval ${pending[0]!.id} allowed`);
    expect(raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });
});
