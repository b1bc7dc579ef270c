import { describe, expect, it } from 'vitest';
import { api, startGateway } from '@switchboard/testkit';
import { bearer, collectTurn, connectClient } from './helpers.js';
import { openEvents, signIn, withCookie, type SseEvent, type SseStream } from './console-helpers.js';
import { BOB, params, TOKEN, useTelegramEnv, waitForText } from './telegram-helpers.js';

// The console's live stream (issue 17): one SSE stream per viewer, filtered server-side by the
// viewer's scopes; a member's stream carries only their own approvals; revoking the token or
// signing out ends it. Stats and pings run on config timers, shortened here.

const env = useTelegramEnv({ dmPolicy: 'pairing' }, { console: { statsInterval: '300ms', pingInterval: '300ms' } });
const op = () => env.gw.credentials().operatorToken;

async function operatorToken(name: string, scopes: string[]) {
  const res = await api(env.gw, 'POST', '/api/v1/tokens', { token: op(), body: { kind: 'operator', name, scopes } });
  expect(res.status).toBe(201);
  return res.json as { secret: string; token: { id: string } };
}

async function member(name: string) {
  const p = await api(env.gw, 'POST', '/api/v1/principals', { token: op(), body: { name, role: 'member' } });
  const t = await api(env.gw, 'POST', '/api/v1/tokens', { token: op(), body: { kind: 'client', principalId: p.json.principal.id } });
  expect(t.status).toBe(201);
  return { principalId: p.json.principal.id as string, secret: t.json.secret as string };
}

const of = (type: string) => (e: SseEvent) => e.type === type;
const kinds = (s: SseStream) => s.events.map((e) => e.type);

describe('GET /api/v1/events', () => {
  it('refuses without auth and to a client token as Bearer; the never-ending stream is not in the OpenAPI document', async () => {
    expect((await api(env.gw, 'GET', '/api/v1/events')).status).toBe(401);
    const doc = await api(env.gw, 'GET', '/api/v1/openapi.json');
    expect(Object.keys(doc.json.paths)).not.toContain('/api/v1/events');
    expect(Object.keys(doc.json.paths)).toContain('/api/v1/auth/session');
    const alice = await member('ev-refused');
    expect((await api(env.gw, 'GET', '/api/v1/events', { token: alice.secret })).status).toBe(401);
  });

  it('filters by scope and by person; revocation and sign-out end streams; channel health changes arrive', async () => {
    const { gw, tg, model } = env;
    const admin = await openEvents(gw, bearer(op()));
    expect(admin.status).toBe(200);
    expect(admin.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(admin.headers['content-security-policy']).toBeUndefined();
    const tgHealth = await admin.next((e) => e.type === 'channel.health' && e.data.channel === 'telegram' && e.data.account === 'main');
    expect(tgHealth.data).toMatchObject({ state: expect.any(String), detail: expect.anything() });
    const firstStats = await admin.next(of('stats'));
    expect(firstStats.data).toMatchObject({
      turnsPerMinute: expect.any(Number),
      modelLatencyMs: { p50: null, p95: null },
      modelErrors: 0,
      pendingApprovals: 0,
      pendingPairing: 0,
    });
    await admin.next(of('ping'));

    const reader = await operatorToken('ev-reader', ['read']);
    const readOnly = await openEvents(gw, bearer(reader.secret));
    const pairingOp = await operatorToken('ev-pairing', ['pairing']);
    const pairingSession = await signIn(gw, pairingOp.secret);
    const pairingOnly = await openEvents(gw, { cookie: pairingSession.cookie });
    const alice = await member('ev-alice');
    const bob = await member('ev-bob');
    const aliceSession = await signIn(gw, alice.secret);
    const bobSession = await signIn(gw, bob.secret);
    const aliceStream = await openEvents(gw, { cookie: aliceSession.cookie });
    const bobStream = await openEvents(gw, { cookie: bobSession.cookie });
    // Members and pairing-only operators get no health or stats: only pings so far.
    await pairingOnly.next(of('ping'));
    await aliceStream.next(of('ping'));
    expect(kinds(aliceStream).filter((k) => k !== 'ping' && k !== 'comment')).toEqual([]);
    expect(kinds(pairingOnly).filter((k) => k !== 'ping' && k !== 'comment')).toEqual([]);

    // Pairing: `pairing` (and admin) see the request and the decision; `read` and members do not.
    tg.sendUserMessage(TOKEN, { chat: BOB.dm, from: BOB.user, text: 'let me in' });
    const notice = await waitForText(tg, BOB.dm.id, 'pairing code');
    const code = /code is ([A-HJ-NP-Z2-9]{8})/.exec(String(params(notice).text))![1]!;
    const requested = await pairingOnly.next(of('pairing.requested'));
    expect(requested.data).toMatchObject({ code, status: 'pending', request: { channel: 'telegram', account: 'main', identity: `telegram:${BOB.user.id}` } });
    await admin.next((e) => e.type === 'pairing.requested' && e.data.code === code);
    const afterPairing = readOnly.events.length;
    await readOnly.next((e) => e.type === 'stats' && e.data.pendingPairing === 1, afterPairing);
    const approve = await withCookie(gw, 'POST', `/api/v1/pairing/${code}/approve`, pairingSession, { body: {} });
    expect(approve.status).toBe(200);
    expect((await pairingOnly.next(of('pairing.decided'))).data).toMatchObject({ code, status: 'approved' });
    await waitForText(tg, BOB.dm.id, 'echo: let me in');
    const ended = await readOnly.next((e) => e.type === 'turn.ended' && e.data.channel === 'telegram:main');
    expect(ended.data).toMatchObject({ outcome: expect.any(String), durationMs: expect.any(Number) });
    const withLatency = await readOnly.next((e) => e.type === 'stats' && e.data.turnsPerMinute >= 1 && e.data.modelLatencyMs.p50 !== null);
    expect(withLatency.data.modelLatencyMs.p95).toBeGreaterThanOrEqual(withLatency.data.modelLatencyMs.p50);

    // An approval of Alice's turn: Alice and `approvals`/admin see it; Bob, `read` and `pairing` do not.
    const ws = await connectClient(gw, alice.secret);
    model.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'ev.txt', content: 'x' }, id: 'toolu_ev1' }] }, { text: 'Written.' });
    ws.send({ type: 'message', clientId: 'ev1', text: 'write it' });
    const asked = await aliceStream.next(of('approval.requested'));
    expect(asked.data).toMatchObject({ status: 'pending', approval: { tool: 'write_file', requesterPrincipalId: alice.principalId } });
    const approvalId = asked.data.id as string;
    await admin.next((e) => e.type === 'approval.requested' && e.data.id === approvalId);
    const mark = { bob: bobStream.events.length, read: readOnly.events.length, pairing: pairingOnly.events.length };
    await bobStream.next(of('ping'), mark.bob);
    await readOnly.next((e) => e.type === 'stats' && e.data.pendingApprovals === 1, mark.read);
    await pairingOnly.next(of('ping'), mark.pairing);

    const adminSession = await signIn(gw, op());
    const decided = await withCookie(gw, 'POST', `/api/v1/approvals/${approvalId}/decision`, adminSession, { body: { decision: 'allow' } });
    expect(decided.status).toBe(200);
    expect((await aliceStream.next(of('approval.decided'))).data).toMatchObject({
      id: approvalId,
      status: 'allowed',
      approval: { decidedBy: expect.stringContaining('operator:') },
    });
    expect((await collectTurn(ws, 'ev1')).end).toMatchObject({ type: 'final', text: 'Written.' });
    ws.close();
    await bobStream.next(of('ping'), bobStream.events.length);
    for (const s of [bobStream, readOnly, pairingOnly]) expect(kinds(s).filter((k) => k.startsWith('approval.'))).toEqual([]);
    for (const s of [bobStream, aliceStream, readOnly]) expect(kinds(s).filter((k) => k.startsWith('pairing.'))).toEqual([]);
    for (const s of [bobStream, aliceStream, pairingOnly])
      expect(kinds(s).filter((k) => k === 'stats' || k === 'channel.health' || k === 'turn.ended')).toEqual([]);

    // Revoking the reader's token ends its stream; signing out ends the pairing operator's.
    expect((await api(gw, 'DELETE', `/api/v1/tokens/${reader.token.id}`, { token: op() })).status).toBe(200);
    expect((await readOnly.next(of('end'))).data).toEqual({ reason: 'token_revoked' });
    await readOnly.ended;
    expect((await withCookie(gw, 'DELETE', '/api/v1/auth/session', pairingSession)).status).toBe(204);
    expect((await pairingOnly.next(of('end'))).data).toEqual({ reason: 'session_ended' });
    await pairingOnly.ended;

    // The Bot API goes away: the telegram account's health changes on the stream.
    const mark2 = admin.events.length;
    await tg.close();
    const changed = await admin.next((e) => e.type === 'channel.health' && e.data.channel === 'telegram' && e.data.state !== 'up', mark2, 30_000);
    expect(['degraded', 'down', 'starting']).toContain(changed.data.state);
    expect(typeof changed.data.detail).toBe('string');
    for (const s of [admin, aliceStream, bobStream]) s.close();
  });
});

describe('stream limits', () => {
  it('one token opens at most 20 streams; closing one makes room', async () => {
    const t = await operatorToken('ev-many', ['read']);
    const streams: SseStream[] = [];
    for (let i = 0; i < 20; i++) {
      const s = await openEvents(env.gw, bearer(t.secret));
      expect(s.status).toBe(200);
      streams.push(s);
    }
    const refused = await api(env.gw, 'GET', '/api/v1/events', { token: t.secret });
    expect(refused.status).toBe(503);
    expect(refused.json).toMatchObject({ code: 'too_many_streams' });
    // Another token is not affected.
    const other = await openEvents(env.gw, bearer(op()));
    expect(other.status).toBe(200);
    other.close();
    streams[0]!.close();
    await streams[0]!.ended;
    // The server sees the close on its next write (a ping at the latest).
    await streams[1]!.next(of('ping'), streams[1]!.events.length);
    const again = await openEvents(env.gw, bearer(t.secret));
    expect(again.status).toBe(200);
    for (const s of [...streams, again]) s.close();
  });
});

describe('shutdown with open streams', () => {
  it('ends every stream with a reason and exits cleanly; no token or cookie reaches the log', async () => {
    const gw = await startGateway({ modelUrl: env.model.url });
    const token = gw.credentials().operatorToken;
    const s = await signIn(gw, token);
    const byCookie = await openEvents(gw, { cookie: s.cookie });
    const byBearer = await openEvents(gw, bearer(token));
    await byCookie.next(of('stats'));
    await byBearer.next(of('stats'));
    const exit = await gw.stop();
    expect(exit).toMatchObject({ code: 0, signal: null });
    for (const stream of [byCookie, byBearer]) {
      await stream.ended;
      expect(stream.events.filter(of('end')).map((e) => e.data)).toEqual([{ reason: 'shutting_down' }]);
    }
    const logs = gw.logs().join('\n');
    expect(logs).not.toContain(token);
    expect(logs).not.toContain(s.cookie.split('=')[1]!);
    expect(logs).not.toContain(s.csrf);
  });
});
