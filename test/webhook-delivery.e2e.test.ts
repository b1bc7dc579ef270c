import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

const account = { dmPolicy: 'allowlist', allowFrom: ['alice', 'bob'] };
const env = useWebhookGateway({
  // The retry backoff is the timer under test here.
  main: { ...account, callbackRetries: 3, callbackRetryDelay: '200ms' },
  flaky: { ...account, callbackRetries: 0, dmPolicy: 'disabled' },
});

const readDb = <T>(sql: string, ...args: unknown[]): T[] => {
  const db = new Database(join(env.gw.dataDir, 'switchboard.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...args) as T[];
  } finally {
    db.close();
  }
};
const channelHealth = async (id: string) =>
  (await api(env.gw, 'GET', '/readyz', { token: env.gw.credentials().operatorToken })).json.channels[id] as { state: string; detail?: string };

/** Polls a condition the gateway updates asynchronously (its health after a callback answer). */
async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhook callbacks', () => {
  it('retries a failing callback with backoff, then ledgers the final once', async () => {
    const { gw, platform } = env;
    platform.failNext(2, 503);
    const m = platform.dm('alice', 'retry me');
    const accepted = (await platform.send(gw, m)).json;
    const attempts = await platform.waitForCount(replyTo(m.id), 3);
    expect(attempts.map((a) => a.status)).toEqual([503, 503, 200]);
    expect(new Set(attempts.map((a) => a.body.id))).toEqual(new Set([`${accepted.turnId}:0`]));
    expect(attempts.every((a) => a.verified)).toBe(true);
    // Backoff: 200 ms, then 400 ms.
    expect(attempts[1]!.receivedAt - attempts[0]!.receivedAt).toBeGreaterThanOrEqual(190);
    expect(attempts[2]!.receivedAt - attempts[1]!.receivedAt).toBeGreaterThanOrEqual(390);
    const rows = await until(
      async () =>
        readDb<{ kind: string; part: number; platform_message_id: string }>(
          'select kind, part, platform_message_id from deliveries where turn_id = ?',
          accepted.turnId,
        ),
      (r) => r.length > 0,
    );
    expect(rows).toEqual([{ kind: 'final', part: 0, platform_message_id: `pm-${attempts[2]!.seq}` }]);
    expect((await channelHealth('webhook:main')).state).toBe('up');
  });

  it('reports the account down after repeated failed deliveries, and up once the platform answers again', async () => {
    const { gw } = env;
    const flaky = env.platforms.flaky!;
    flaky.failNext(3, 500);
    for (let i = 1; i <= 3; i++) {
      expect((await flaky.send(gw, flaky.dm('bob', `knock ${i}`))).json.gate).toBe('refused');
      await flaky.waitForCount((c) => c.body.type === 'notice', i);
    }
    const down = await until(
      () => channelHealth('webhook:flaky'),
      (h) => h.state === 'down',
    );
    expect(down).toMatchObject({ state: 'down', detail: expect.stringMatching(/3 callback deliveries in a row failed \(last: HTTP 500\)/) });
    expect((await channelHealth('webhook:main')).state).toBe('up');
    await flaky.send(gw, flaky.dm('bob', 'knock 4'));
    await flaky.waitFor((c) => c.body.type === 'notice' && c.status === 200);
    expect(
      (
        await until(
          () => channelHealth('webhook:flaky'),
          (h) => h.state === 'up',
        )
      ).state,
    ).toBe('up');
  });

  it('sends approval requests and takes signed decisions from the platform', async () => {
    const { fake, gw, platform } = env;
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'hook.txt', content: 'ok' }, id: 'toolu_wh1' }] }, { text: 'Written.' });
    const m = platform.dm('alice', 'write the file');
    await platform.send(gw, m);
    const req = await platform.waitFor((c) => c.body.type === 'approval_request' && c.body.replyTo === m.id);
    expect(req.body).toMatchObject({
      tool: 'write_file',
      conversation: { id: 'dm-alice', kind: 'dm' },
      approvalId: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(req.body.summary).toContain('hook.txt');
    const approvalId = req.body.approvalId as string;

    const stranger = await platform.decide(gw, approvalId, { decision: 'allow', senderId: 'mallory' });
    expect(stranger.status).toBe(403);
    const forged = await platform.decide(gw, approvalId, { decision: 'allow', senderId: 'alice' }, { secret: 'wrong-secret-wrong-secret' });
    expect(forged.status).toBe(401);
    const bad = await platform.decide(gw, approvalId, { decision: 'maybe', senderId: 'alice' });
    expect(bad.json).toMatchObject({ code: 'bad_request', field: 'decision' });

    const ok = await platform.decide(gw, approvalId, { decision: 'allow', senderId: 'alice' });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ approvalId, outcome: 'decided', status: 'allowed' });
    expect((await platform.decide(gw, approvalId, { decision: 'deny', senderId: 'alice' })).status).toBe(409);
    expect((await platform.decide(gw, 'apr-missing', { decision: 'deny', senderId: 'alice' })).status).toBe(404);

    await platform.waitFor((c) => c.body.type === 'approval_resolved' && c.body.approvalId === approvalId && c.body.allowed === true);
    const reply = await platform.waitFor(replyTo(m.id));
    expect(reply.body).toMatchObject({ text: 'Written.', state: 'completed' });
  });

  it('an operator disabling DMs takes effect on the next message, and is audited with the operator’s name', async () => {
    const { fake, gw, platform } = env;
    const { operatorToken } = gw.credentials();
    const put = await api(gw, 'PUT', '/api/v1/channels/webhook:main/policy', { token: operatorToken, body: { dmPolicy: 'disabled' } });
    expect(put.status).toBe(200);
    expect(put.json.effective.dmPolicy).toBe('disabled');
    const calls = fake.requests.length;
    const m = platform.dm('alice', 'are you there?');
    expect((await platform.send(gw, m)).json.gate).toBe('refused');
    const notice = await platform.waitFor((c) => c.body.type === 'notice' && /disabled/.test(c.body.text as string));
    expect(notice.body.conversation).toEqual({ id: 'dm-alice', kind: 'dm' });
    expect(fake.requests.length).toBe(calls);

    const expected = { actor: 'operator:bootstrap-operator', action: 'policy.update', target: 'webhook:main', detail: { dmPolicy: 'disabled' } };
    const rows = readDb<{ actor: string; action: string; target: string; detail: string }>(
      "select actor, action, target, detail from audit where action = 'policy.update'",
    );
    expect(rows.map((r) => ({ ...r, detail: JSON.parse(r.detail) as unknown }))).toContainEqual(expected);
    // The audit route is newer than this test; where the gateway has it, it must agree with the table.
    const viaApi = await api(gw, 'GET', '/api/v1/audit?action=policy.update', { token: operatorToken });
    if (viaApi.status !== 404) expect(viaApi.json.entries).toContainEqual(expect.objectContaining(expected));
  });
});
