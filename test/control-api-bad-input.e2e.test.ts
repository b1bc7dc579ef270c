import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, connectWs, startFakeAnthropic, startGateway, stopAllGateways, type FakeAnthropic, type GatewayProcess } from '@switchboard/testkit';
import { bearer, chat } from './helpers.js';

// Acceptance 5: malformed bodies, unknown ids and over-long strings get the documented 4xx with a
// JSON { code, message } body, and nothing changes in the database (compared table by table,
// read through a read-only SQLite handle, before and after).

let fake: FakeAnthropic;
let gw: GatewayProcess;
let op: string;
let ownerId: string;
let memberId: string;
let endedSession: string;
let revokedToken: string;
let ruleBody: Record<string, unknown>;

const TABLES = [
  'principals',
  'identities',
  'tokens',
  'sessions',
  'entries',
  'turns',
  'inbox',
  'rules',
  'audit',
  'approvals',
  'pairing_requests',
  'policy_overrides',
];
const LONG = 'x'.repeat(10_000);
const MISSING = '00000000-0000-4000-8000-000000000000';

/** Every row of every table, read-only. */
function snapshot(): Record<string, unknown[]> {
  const db = new Database(join(gw.dataDir, 'switchboard.db'), { readonly: true, fileMustExist: true });
  try {
    return Object.fromEntries(TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all()]));
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  fake = await startFakeAnthropic();
  gw = await startGateway({ modelUrl: fake.url });
  op = gw.credentials().operatorToken;
  ownerId = gw.credentials().principalId;
  const call = (method: string, path: string, body?: unknown) => api(gw, method, `/api/v1${path}`, { token: op, ...(body !== undefined ? { body } : {}) });
  memberId = (await call('POST', '/principals', { name: 'mia', role: 'member' })).json.principal.id;
  await call('POST', `/principals/${memberId}/identities`, { channelType: 'telegram', externalId: '77' });
  const t = await call('POST', '/tokens', { kind: 'operator', name: 'old', scopes: ['read'] });
  revokedToken = t.json.token.id;
  await call('DELETE', `/tokens/${revokedToken}`);
  ruleBody = { scope: { kind: 'role', id: 'guest' }, behavior: 'deny', rule: 'edit_file' };
  await call('POST', '/rules', ruleBody);
  const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
  const turn = await chat(ws, 'b1', 'hi');
  await ws.close();
  // The final frame goes out before the turn row is marked done: snapshots must not see that write.
  await gw.waitForLog((l) => l.includes('turn finished') && l.includes(String(turn.end.turnId)));
  endedSession = (await call('GET', '/sessions')).json.sessions[0].id;
  await call('POST', `/sessions/${endedSession}/reset`);
});
afterAll(async () => {
  await stopAllGateways();
  await fake.close();
});

type Case = [method: string, path: string, body: unknown, status: number, mentions?: string];

function cases(): Case[] {
  return [
    // principals
    ['POST', '/principals', {}, 400, 'name'],
    ['POST', '/principals', { name: LONG, role: 'member' }, 400, 'name'],
    ['POST', '/principals', { name: 'has space', role: 'member' }, 400, 'name'],
    ['POST', '/principals', { name: 'zed', role: 'emperor' }, 400, 'role'],
    ['POST', '/principals', { name: 'zed', role: 'member', admin: true }, 400],
    ['POST', '/principals', '{"name": "zed", ', 400],
    ['POST', '/principals', [1, 2], 400],
    ['POST', '/principals', { name: 'mia', role: 'guest' }, 409],
    ['GET', `/principals/${MISSING}`, undefined, 404],
    ['GET', `/principals/${'x'.repeat(900)}`, undefined, 400, 'id'],
    ['PATCH', `/principals/${MISSING}`, { role: 'admin' }, 404],
    ['PATCH', `/principals/${memberId}`, {}, 400],
    ['PATCH', `/principals/${memberId}`, { name: LONG }, 400, 'name'],
    ['PATCH', `/principals/${memberId}`, { name: 'owner' }, 409],
    ['PATCH', `/principals/${ownerId}`, { role: 'member' }, 409],
    ['DELETE', `/principals/${MISSING}`, undefined, 404],
    ['DELETE', `/principals/${ownerId}`, undefined, 409],
    ['POST', `/principals/${MISSING}/identities`, { channelType: 'telegram', externalId: '1' }, 404],
    ['POST', `/principals/${ownerId}/identities`, { channelType: 'tele gram', externalId: '1' }, 400, 'channelType'],
    ['POST', `/principals/${ownerId}/identities`, { channelType: 'telegram', externalId: LONG }, 400, 'externalId'],
    ['POST', `/principals/${ownerId}/identities`, { channelType: 'telegram', externalId: '77' }, 409],
    ['DELETE', `/principals/${ownerId}/identities`, { channelType: 'telegram', externalId: '77' }, 404],
    ['DELETE', `/principals/${memberId}/identities/${MISSING}`, undefined, 404],
    // tokens
    ['POST', '/tokens', { kind: 'operator', name: 'x', scopes: [] }, 400, 'scopes'],
    ['POST', '/tokens', { kind: 'operator', name: 'x', scopes: ['root'] }, 400, 'scopes'],
    ['POST', '/tokens', { kind: 'operator', name: LONG, scopes: ['read'] }, 400, 'name'],
    ['POST', '/tokens', { kind: 'god', name: 'x' }, 400],
    ['POST', '/tokens', { kind: 'client', principalId: MISSING }, 404],
    ['POST', '/tokens', { kind: 'client', principalId: LONG }, 400, 'principalId'],
    ['DELETE', `/tokens/${MISSING}`, undefined, 404],
    ['DELETE', `/tokens/${revokedToken}`, undefined, 409],
    // rules
    ['POST', '/rules', { scope: { kind: 'gateway' }, behavior: 'deny', rule: 'write_file(' }, 400, 'rule'],
    ['POST', '/rules', { scope: { kind: 'gateway' }, behavior: 'deny', rule: 'group:nope' }, 400, 'group'],
    ['POST', '/rules', { scope: { kind: 'gateway' }, behavior: 'deny', rule: LONG }, 400, 'rule'],
    ['POST', '/rules', { scope: { kind: 'gateway' }, behavior: 'maybe', rule: 'read_file' }, 400, 'behavior'],
    ['POST', '/rules', { scope: { kind: 'gateway', id: 'x' }, behavior: 'deny', rule: 'read_file' }, 400, 'scope.id'],
    ['POST', '/rules', { scope: { kind: 'principal' }, behavior: 'deny', rule: 'read_file' }, 400, 'scope.id'],
    ['POST', '/rules', { scope: { kind: 'principal', id: MISSING }, behavior: 'deny', rule: 'read_file' }, 400, 'scope.id'],
    ['POST', '/rules', { scope: { kind: 'role', id: 'king' }, behavior: 'deny', rule: 'read_file' }, 400, 'scope.id'],
    ['POST', '/rules', { scope: { kind: 'planet', id: 'x' }, behavior: 'deny', rule: 'read_file' }, 400, 'scope'],
    ['POST', '/rules', ruleBody, 409],
    ['DELETE', `/rules/${MISSING}`, undefined, 404],
    // capabilities
    ['PUT', '/capabilities/no_such_tool', { scope: { kind: 'gateway' }, enabled: false }, 404],
    ['PUT', '/capabilities/websocket:default', { scope: { kind: 'gateway' }, enabled: false }, 400],
    ['PUT', '/capabilities/write_file', { scope: { kind: 'role', id: 'member' } }, 400, 'enabled'],
    ['PUT', '/capabilities/write_file', { scope: { kind: 'role', id: 'member' }, enabled: 'no' }, 400, 'enabled'],
    ['PUT', '/capabilities/write_file', { scope: { kind: 'agent', id: 'nobody' }, enabled: false }, 400, 'scope.id'],
    ['PUT', '/capabilities/write_file', { scope: { kind: 'conversation', id: LONG }, enabled: false }, 400, 'scope'],
    ['PUT', `/capabilities/${'w'.repeat(200)}`, { scope: { kind: 'gateway' }, enabled: false }, 400, 'id'],
    // sessions
    ['POST', `/sessions/${MISSING}/reset`, undefined, 404],
    ['POST', `/sessions/${endedSession}/reset`, undefined, 409],
    ['DELETE', `/sessions/${MISSING}`, undefined, 404],
    ['GET', '/sessions?limit=100000', undefined, 400, 'limit'],
    ['GET', `/sessions?principalId=${LONG}`, undefined, 400, 'principalId'],
    // audit, approvals, channels, pairing
    ['GET', '/audit?since=yesterday', undefined, 400, 'since'],
    ['GET', '/audit?limit=0', undefined, 400, 'limit'],
    ['GET', `/audit?action=${LONG}`, undefined, 400, 'action'],
    ['POST', `/approvals/${MISSING}/decision`, { decision: 'allow' }, 404],
    ['POST', `/approvals/${MISSING}/decision`, { decision: 'perhaps' }, 400, 'decision'],
    ['POST', `/approvals/${MISSING}/decision`, { decision: 'deny', reason: LONG }, 400, 'reason'],
    ['PUT', '/channels/telegram:nope/policy', { dmPolicy: 'open' }, 404],
    ['PUT', '/channels/websocket:default/policy', { dmPolicy: 'sometimes' }, 400, 'dmPolicy'],
    ['POST', '/pairing/ABCDEFGH/approve', {}, 404],
    ['POST', '/pairing/lower/approve', {}, 400, 'code'],
    ['GET', '/no/such/route', undefined, 404],
  ];
}

describe('control API bad input', () => {
  it('answers every bad request with its documented 4xx and changes nothing', async () => {
    const before = snapshot();
    expect(before.principals).toHaveLength(2);
    for (const [method, path, body, status, mentions] of cases()) {
      const res = await api(gw, method, `/api/v1${path}`, { token: op, ...(body !== undefined ? { body } : {}) });
      const what = `${method} ${path.slice(0, 80)} ${JSON.stringify(body)?.slice(0, 80)}`;
      expect(res.status, `${what}: ${res.text.slice(0, 300)}`).toBe(status);
      expect(typeof res.json?.code, what).toBe('string');
      expect(typeof res.json?.message, what).toBe('string');
      expect(res.json.message.length, what).toBeLessThan(2000);
      if (mentions) expect(res.json.message, what).toContain(mentions);
    }
    expect(snapshot()).toEqual(before);
  });

  it('refuses a body over the size limit and a wrong content type', async () => {
    const before = snapshot();
    const huge = await api(gw, 'POST', '/api/v1/principals', { token: op, body: { name: 'x', role: 'member', pad: 'y'.repeat(2 * 1024 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.json.code).toBe('payload_too_large');
    const xml = await api(gw, 'POST', '/api/v1/principals', { token: op, body: '<name>x</name>', headers: { 'content-type': 'application/xml' } });
    expect(xml.status).toBe(415);
    expect(xml.json.code).toBe('unsupported_media_type');
    const text = await api(gw, 'POST', '/api/v1/principals', { token: op, body: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.json.code).toBe('unsupported_media_type');
    // Beyond the router's limit a path segment is refused before routing, as { code, message }.
    const long = await api(gw, 'GET', `/api/v1/principals/${'x'.repeat(1200)}`, { token: op });
    expect(long.status).toBe(414);
    expect(long.json).toEqual({ code: 'uri_too_long', message: expect.any(String) });
    expect(snapshot()).toEqual(before);
  });
});
