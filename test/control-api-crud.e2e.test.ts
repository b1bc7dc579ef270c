import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, connectWs, startFakeAnthropic, startGateway, stopAllGateways, type FakeAnthropic, type GatewayProcess } from '@switchboard/testkit';
import { bearer, chat } from './helpers.js';

// Happy paths of the control API: principals and identities, tokens (shown once, refused at once
// when revoked, no scope escalation), stored rules, session reset/delete, and the audit trail.

let fake: FakeAnthropic;
let gw: GatewayProcess;
let op: string;
const ACTOR = 'operator:bootstrap-operator';

const call = (method: string, path: string, body?: unknown, token = op) =>
  api(gw, method, `/api/v1${path}`, { token, ...(body !== undefined ? { body } : {}) });
async function actions(action: string): Promise<any[]> {
  return (await call('GET', `/audit?action=${action}`)).json.entries as any[];
}

beforeAll(async () => {
  fake = await startFakeAnthropic();
  gw = await startGateway({ modelUrl: fake.url });
  op = gw.credentials().operatorToken;
});
afterAll(async () => {
  await stopAllGateways();
  await fake.close();
});

describe('principals and identities', () => {
  it('creates, reads, renames, re-roles, links, unlinks and deletes, auditing each change', async () => {
    const created = await call('POST', '/principals', { name: 'ada', role: 'member' });
    expect(created.status).toBe(201);
    const id = created.json.principal.id as string;
    expect(created.json.principal).toMatchObject({ name: 'ada', role: 'member', identities: [] });
    expect((await call('POST', '/principals', { name: 'ada', role: 'guest' })).status).toBe(409);

    const list = await call('GET', '/principals');
    expect((list.json.principals as any[]).map((p) => p.name)).toEqual(['owner', 'ada']);
    expect((await call('GET', '/principals?role=member')).json.principals).toHaveLength(1);

    const patched = await call('PATCH', `/principals/${id}`, { name: 'ada-l', role: 'admin' });
    expect(patched.json.principal).toMatchObject({ id, name: 'ada-l', role: 'admin' });

    const linked = await call('POST', `/principals/${id}/identities`, { channelType: 'telegram', externalId: '4242' });
    expect(linked.status).toBe(201);
    expect(linked.json.identity).toMatchObject({ identity: 'telegram:4242' });
    expect((await call('POST', `/principals/${id}/identities`, { channelType: 'telegram', externalId: '4242' })).status).toBe(200);
    const ownerId = gw.credentials().principalId;
    const taken = await call('POST', `/principals/${ownerId}/identities`, { channelType: 'telegram', externalId: '4242' });
    expect(taken.status).toBe(409);
    expect(taken.json.code).toBe('identity_taken');
    await call('POST', `/principals/${id}/identities`, { channelType: 'slack', externalId: 'T1:U9' });
    expect((await call('GET', `/principals/${id}/identities`)).json.identities).toHaveLength(2);

    expect((await call('DELETE', `/principals/${id}/identities`, { channelType: 'telegram', externalId: '4242' })).status).toBe(200);
    const slack = (await call('GET', `/principals/${id}`)).json.principal.identities[0];
    expect(slack.identity).toBe('slack:T1:U9');
    expect((await call('DELETE', `/principals/${id}/identities/${slack.id}`)).status).toBe(200);
    expect((await call('GET', `/principals/${id}`)).json.principal.identities).toEqual([]);

    const deleted = await call('DELETE', `/principals/${id}`);
    expect(deleted.json).toMatchObject({ deleted: id });
    expect((await call('GET', `/principals/${id}`)).status).toBe(404);

    for (const action of ['principal.create', 'principal.update', 'identity.link', 'identity.unlink', 'principal.delete']) {
      const entries = await actions(action);
      expect(entries.length, action).toBeGreaterThan(0);
      expect(entries[0]).toMatchObject({ actor: ACTOR, target: id });
    }
  });

  it('keeps the last owner: no demotion, no deletion', async () => {
    const ownerId = gw.credentials().principalId;
    expect((await call('PATCH', `/principals/${ownerId}`, { role: 'admin' })).json.code).toBe('last_owner');
    expect((await call('DELETE', `/principals/${ownerId}`)).status).toBe(409);
  });
});

describe('tokens', () => {
  it('a client token made through the API works on WebSocket; revoked, it is refused at once', async () => {
    const p = await call('POST', '/principals', { name: 'bea', role: 'member' });
    const made = await call('POST', '/tokens', { kind: 'client', principalId: p.json.principal.id, name: 'bea-phone' });
    expect(made.status).toBe(201);
    expect(made.json.secret).toMatch(/^swb_c_/);
    expect(made.json.token).toMatchObject({ kind: 'client', name: 'bea-phone', principalId: p.json.principal.id, revokedAt: null });
    const listed = await call('GET', '/tokens?kind=client');
    expect(JSON.stringify(listed.json)).not.toContain(made.json.secret);
    expect((listed.json.tokens as any[]).some((t) => t.id === made.json.token.id)).toBe(true);

    const ws = await connectWs(gw.wsUrl, { headers: bearer(made.json.secret) });
    expect(await ws.next((f) => f.type === 'hello_ok')).toMatchObject({ principalId: p.json.principal.id });
    await ws.close();
    expect((await call('DELETE', `/tokens/${made.json.token.id}`)).json.token.revokedAt).not.toBeNull();
    await expect(connectWs(gw.wsUrl, { headers: bearer(made.json.secret) })).rejects.toMatchObject({ status: 401 });
    expect((await call('DELETE', `/tokens/${made.json.token.id}`)).status).toBe(409);
  });

  it('operator tokens: shown once, scoped, no escalation, revoked at once', async () => {
    const read = await call('POST', '/tokens', { kind: 'operator', name: 'dash', scopes: ['read'] });
    expect(read.status).toBe(201);
    const readSecret = read.json.secret as string;
    expect((await call('GET', '/sessions', undefined, readSecret)).status).toBe(200);
    expect((await call('POST', '/principals', { name: 'x', role: 'guest' }, readSecret)).status).toBe(403);
    // A read token cannot mint anything, let alone an admin token.
    expect((await call('POST', '/tokens', { kind: 'operator', name: 'evil', scopes: ['admin'] }, readSecret)).status).toBe(403);

    const writer = (await call('POST', '/tokens', { kind: 'operator', name: 'ci', scopes: ['read', 'write'] })).json.secret as string;
    const escalate = await call('POST', '/tokens', { kind: 'operator', name: 'evil', scopes: ['admin'] }, writer);
    expect(escalate.status).toBe(403);
    expect((await call('POST', '/tokens', { kind: 'operator', name: 'evil', scopes: ['read', 'pairing'] }, writer)).status).toBe(403);
    const p = (await call('GET', '/principals')).json.principals[0].id as string;
    expect((await call('POST', '/tokens', { kind: 'client', principalId: p }, writer)).status).toBe(403);
    const sub = await call('POST', '/tokens', { kind: 'operator', name: 'ci-read', scopes: ['read'] }, writer);
    expect(sub.status).toBe(201);
    expect((await call('DELETE', `/tokens/${sub.json.token.id}`, undefined, writer)).status).toBe(200);
    expect((await call('GET', '/sessions', undefined, sub.json.secret)).status).toBe(401);
    const adminToken = (await call('GET', '/tokens?kind=operator')).json.tokens.find((t: any) => t.name === 'bootstrap-operator');
    expect((await call('DELETE', `/tokens/${adminToken.id}`, undefined, writer)).status).toBe(403);

    expect((await call('DELETE', `/tokens/${read.json.token.id}`)).status).toBe(200);
    expect((await call('GET', '/sessions', undefined, readSecret)).status).toBe(401);
    const created = await actions('token.create');
    expect(created.some((e) => e.detail.name === 'dash' && e.actor === ACTOR)).toBe(true);
    expect(created.some((e) => e.detail.name === 'ci-read' && e.actor === 'operator:ci')).toBe(true);
    expect(JSON.stringify(created)).not.toContain(readSecret);
  });
});

describe('rules', () => {
  it('stores, lists and deletes rules at a scope, refusing duplicates', async () => {
    const body = { scope: { kind: 'role', id: 'member' }, behavior: 'ask', rule: 'write_file(notes/**)' };
    const created = await call('POST', '/rules', body);
    expect(created.status).toBe(201);
    expect(created.json.rule).toMatchObject({ ...body, source: 'database', createdBy: ACTOR });
    expect((await call('POST', '/rules', body)).status).toBe(409);
    expect((await call('POST', '/rules', { scope: { kind: 'gateway' }, behavior: 'deny', rule: 'group:runtime' })).status).toBe(201);
    const listed = await call('GET', '/rules?behavior=ask');
    expect(listed.json.rules).toEqual([created.json.rule]);
    expect((await call('DELETE', `/rules/${created.json.rule.id}`)).json.deleted.id).toBe(created.json.rule.id);
    expect((await call('GET', '/rules?behavior=ask')).json.rules).toEqual([]);
    expect((await actions('rule.delete'))[0]).toMatchObject({ actor: ACTOR, target: created.json.rule.id, detail: { rule: 'write_file(notes/**)' } });
  });
});

describe('sessions', () => {
  it('reset ends a session (a new one starts); delete removes its transcript', async () => {
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    await chat(ws, 's1', 'remember: the code word is heron');
    const ownerId = gw.credentials().principalId;
    const first = (await call('GET', `/sessions?principalId=${ownerId}`)).json.sessions[0];
    expect((await call('GET', `/sessions/${first.id}/transcript`)).json.entries.length).toBeGreaterThan(0);

    const reset = await call('POST', `/sessions/${first.id}/reset`);
    expect(reset.json.session.endedAt).not.toBeNull();
    expect((await call('POST', `/sessions/${first.id}/reset`)).json.code).toBe('already_ended');
    await chat(ws, 's2', 'hello again');
    const sessions = (await call('GET', `/sessions?principalId=${ownerId}`)).json.sessions as any[];
    expect(sessions.map((s) => s.id)).toContain(first.id);
    const second = sessions.find((s) => s.id !== first.id);
    expect(second.endedAt).toBeNull();

    const del = await call('DELETE', `/sessions/${first.id}`);
    expect(del.status).toBe(200);
    expect(del.json.entries).toBeGreaterThan(0);
    const after = await call('GET', `/sessions/${first.id}/transcript`);
    expect(after.json.entries).toEqual([]);
    expect(after.text).not.toContain('heron');
    expect((await call('GET', `/sessions/${second.id}/transcript`)).json.entries.length).toBeGreaterThan(0);
    expect((await actions('session.delete'))[0]).toMatchObject({ actor: ACTOR, target: first.id });
    await ws.close();
  });
});

describe('audit', () => {
  it('filters by action, actor and time, newest first, and pages', async () => {
    const all = await call('GET', '/audit?limit=500');
    expect(all.json.entries.length).toBeGreaterThan(5);
    const ids = (all.json.entries as any[]).map((e) => e.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    const page1 = await call('GET', '/audit?limit=2');
    expect(page1.json.entries).toHaveLength(2);
    expect(page1.json.nextOffset).toBe(2);
    const page2 = await call('GET', '/audit?limit=2&offset=2');
    expect(page2.json.entries[0].id).toBe(ids[2]);
    expect((await call('GET', `/audit?actor=${ACTOR}`)).json.entries.every((e: any) => e.actor === ACTOR)).toBe(true);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await call('GET', `/audit?since=${encodeURIComponent(future)}`)).json).toEqual({ entries: [], nextOffset: null });
  });
});
