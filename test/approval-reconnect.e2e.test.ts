import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, connectWs } from '@switchboard/testkit';
import { bearer, chat, isEnd, personWorkspace, useGateway } from './helpers.js';

const env = useGateway();

const approvalOf = async (id: string) => {
  const list = await api(env.gw, 'GET', '/api/v1/approvals', { token: env.gw.credentials().operatorToken });
  return (list.json.approvals as Array<{ id: string; status: string; decidedBy: string | null }>).find((a) => a.id === id);
};

/** A fresh owner with its own client token: each test has its own session (one turn at a time per session). */
async function person(name: string): Promise<{ token: string; principalId: string }> {
  const { operatorToken } = env.gw.credentials();
  const created = await api(env.gw, 'POST', '/api/v1/principals', { token: operatorToken, body: { name, role: 'owner' } });
  expect(created.status).toBe(201);
  const principalId = created.json.principal.id as string;
  const made = await api(env.gw, 'POST', '/api/v1/tokens', { token: operatorToken, body: { kind: 'client', principalId } });
  expect(made.status).toBe(201);
  return { token: made.json.secret as string, principalId };
}

describe('approvals find their person again', () => {
  it('a client that reconnects with hello + cursor gets the pending approval_request again; approving it completes the turn', async () => {
    const { fake, gw } = env;
    const { token, principalId } = await person('reconnecting');
    const ws = await connectWs(gw.wsUrl, { headers: bearer(token) });
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'reconnect.txt', content: 'found again' }, id: 'toolu_reconnect' }] },
      { text: 'Written after reconnecting.' },
    );
    ws.send({ type: 'message', clientId: 'rc1', text: 'write after a reconnect' });
    const live = await ws.next((f) => f.type === 'approval_request');
    ws.close();

    const ws2 = await connectWs(gw.wsUrl, { headers: bearer(token) });
    ws2.send({ type: 'hello', cursor: 0 });
    const hello = await ws2.next((f) => f.type === 'hello_ok');
    expect(hello.type).toBe('hello_ok');
    const again = await ws2.next((f) => f.type === 'approval_request');
    // The same frame as the live one (including source).
    expect(again).toEqual(live);
    expect(again.source).toBeTypeOf('string');
    ws2.send({ type: 'approve', approvalId: again.approvalId, decision: 'allow' });
    expect(await ws2.next((f) => f.type === 'approval_result')).toMatchObject({ outcome: 'decided', status: 'allowed' });
    const end = await ws2.next((f) => isEnd(f) && f.clientId === 'rc1', 20_000);
    expect(end).toMatchObject({ type: 'final', text: 'Written after reconnecting.' });
    expect(readFileSync(join(personWorkspace(gw, principalId), 'reconnect.txt'), 'utf8')).toBe('found again');
    ws2.close();
  });

  it('re-sending the clientId of a turn that awaits approval gets its approval_request again', async () => {
    const { fake, gw } = env;
    const { token } = await person('re-sending');
    const ws = await connectWs(gw.wsUrl, { headers: bearer(token) });
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'resent.txt', content: 'again' }, id: 'toolu_resent' }] },
      { text: 'Written after the re-send.' },
    );
    ws.send({ type: 'message', clientId: 'rc2', text: 'write after a re-send' });
    const live = await ws.next((f) => f.type === 'approval_request');
    ws.close();

    const ws2 = await connectWs(gw.wsUrl, { headers: bearer(token) });
    ws2.send({ type: 'message', clientId: 'rc2', text: 'write after a re-send' });
    expect(await ws2.next((f) => f.type === 'accepted' && f.clientId === 'rc2')).toMatchObject({ duplicate: true });
    const again = await ws2.next((f) => f.type === 'approval_request');
    expect(again).toEqual(live);
    ws2.send({ type: 'approve', approvalId: again.approvalId, decision: 'allow' });
    const end = await ws2.next((f) => isEnd(f) && f.clientId === 'rc2', 20_000);
    expect(end).toMatchObject({ type: 'final', text: 'Written after the re-send.' });
    ws2.close();
  });

  it('aborting a turn cancels its approval in the database (audited); a later decision is already_decided', async () => {
    const { fake, gw } = env;
    const { operatorToken } = gw.credentials();
    const { token } = await person('aborting');
    const ws = await connectWs(gw.wsUrl, { headers: bearer(token) });
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'aborted.txt', content: 'never' }, id: 'toolu_abort' }] });
    ws.send({ type: 'message', clientId: 'rc3', text: 'write, then be stopped' });
    const req = await ws.next((f) => f.type === 'approval_request');
    ws.send({ type: 'abort', turnId: req.turnId });
    const end = await ws.next((f) => isEnd(f) && f.clientId === 'rc3', 20_000);
    expect(end).toMatchObject({ type: 'error', code: 'aborted' });

    expect(await approvalOf(req.approvalId)).toMatchObject({ status: 'cancelled', decidedBy: 'system' });
    const pending = await api(gw, 'GET', '/api/v1/approvals?status=pending', { token: operatorToken });
    expect(pending.json.approvals.map((a: { id: string }) => a.id)).not.toContain(req.approvalId);
    const cancelled = await api(gw, 'GET', '/api/v1/approvals?status=cancelled', { token: operatorToken });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.approvals.map((a: { id: string }) => a.id)).toContain(req.approvalId);
    const audit = await api(gw, 'GET', '/api/v1/audit?action=approval.cancelled', { token: operatorToken });
    expect(audit.json.entries).toEqual(expect.arrayContaining([expect.objectContaining({ target: req.approvalId })]));

    const denied = await api(gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, { token: operatorToken, body: { decision: 'deny' } });
    expect(denied.status).toBe(409);
    expect(denied.json).toMatchObject({ code: 'already_decided', approval: { status: 'cancelled' } });
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
    expect(await ws.next((f) => f.type === 'approval_result')).toMatchObject({ outcome: 'already_decided', status: 'cancelled' });
    expect(await approvalOf(req.approvalId)).toMatchObject({ status: 'cancelled' });

    // A reconnecting client is not offered the cancelled approval.
    ws.send({ type: 'hello', cursor: end.cursor });
    await ws.next((f) => f.type === 'hello_ok');
    const after = await chat(ws, 'rc3b', 'anything pending?');
    expect(after.frames.some((f) => f.type === 'approval_request')).toBe(false);
    ws.close();
  });

  it('a re-used clientId with different text is refused with client_id_reused; the same text is an idempotent retry', async () => {
    const { fake, gw } = env;
    const ws = await connectWs(gw.wsUrl, { headers: bearer((await person('re-using')).token) });
    fake.enqueue({ text: 'The first answer.' });
    const first = await chat(ws, 'reuse1', 'the first question');
    expect(first.end).toMatchObject({ type: 'final', text: 'The first answer.' });
    const calls = fake.requests.length;

    ws.send({ type: 'message', clientId: 'reuse1', text: 'a different question' });
    const refused = await ws.next((f) => f.clientId === 'reuse1');
    expect(refused).toMatchObject({ type: 'error', code: 'client_id_reused', clientId: 'reuse1' });
    expect(refused.message).toMatch(/clientId/);
    expect(refused.message).toMatch(/fresh|new/);

    ws.send({ type: 'message', clientId: 'reuse1', text: 'the first question' });
    expect(await ws.next((f) => f.clientId === 'reuse1')).toMatchObject({ type: 'accepted', duplicate: true });
    expect(await ws.next((f) => f.clientId === 'reuse1')).toMatchObject({ type: 'final', text: 'The first answer.' });
    expect(fake.requests.length).toBe(calls);
    ws.close();
  });
});
