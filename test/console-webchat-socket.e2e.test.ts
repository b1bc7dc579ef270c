import { describe, expect, it } from 'vitest';
import { api, connectWs, startGateway, WsHandshakeError } from '@switchboard/testkit';
import { chat, useGateway } from './helpers.js';
import { signIn, withCookie } from './console-helpers.js';

// The web chat's socket (issue 17): the upgrade on the default WebSocket account authenticates
// with a member's console session cookie — from console.publicOrigin only, whatever
// allowedOrigins says; a cross-origin upgrade with a valid cookie is refused or gets nothing from
// it; signing out or revoking the token closes the socket.

const env = useGateway();
const op = () => env.gw.credentials().operatorToken;

async function member(name: string) {
  const p = await api(env.gw, 'POST', '/api/v1/principals', { token: op(), body: { name, role: 'member' } });
  const t = await api(env.gw, 'POST', '/api/v1/tokens', { token: op(), body: { kind: 'client', principalId: p.json.principal.id } });
  return { principalId: p.json.principal.id as string, secret: t.json.secret as string, tokenId: t.json.token.id as string };
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => (e instanceof WsHandshakeError ? e : Promise.reject(e)),
  );

describe('web chat socket (cookie upgrade)', () => {
  it('a member cookie from the public origin chats as that member; the history is theirs', async () => {
    const alice = await member('wc-alice');
    const s = await signIn(env.gw, alice.secret);
    expect(s.res.json.webChat).toBe(true);
    const ws = await connectWs(env.gw.wsUrl, { headers: { cookie: s.cookie }, origin: env.gw.url });
    expect(await ws.next((f) => f.type === 'hello_ok')).toMatchObject({ principalId: alice.principalId });
    const turn = await chat(ws, 'wc1', 'hello from the browser');
    expect(turn.end).toMatchObject({ type: 'final' });
    await ws.close();
    // A reload: a new cookie upgrade, then a tokenless hello with cursor 0 replays the conversation.
    const again = await connectWs(env.gw.wsUrl, { headers: { cookie: s.cookie }, origin: env.gw.url });
    await again.next((f) => f.type === 'hello_ok');
    again.send({ type: 'hello', cursor: 0 });
    const replayed = await again.next((f) => f.type === 'final');
    expect(replayed).toMatchObject({ clientId: 'wc1', text: turn.end.text, cursor: turn.end.cursor });
    await again.close();
    const mine = await withCookie(env.gw, 'GET', '/api/v1/me/sessions', s);
    expect(mine.json.sessions).toHaveLength(1);
    expect(mine.json.sessions[0]).toMatchObject({ principalId: alice.principalId, channel: 'websocket', account: 'default' });
  });

  it('refuses a cross-origin upgrade with a valid cookie before the handshake; an allowed origin gets nothing from the cookie', async () => {
    const alice = await member('wc-cross');
    const s = await signIn(env.gw, alice.secret);
    const evil = await refusal(connectWs(env.gw.wsUrl, { headers: { cookie: s.cookie }, origin: 'https://evil.example' }));
    expect(evil?.status).toBe(403);
    expect(evil?.body).toContain('origin_refused');
    // https://app.example is in allowedOrigins: it may connect, but must say hello with a token.
    const other = await connectWs(env.gw.wsUrl, { headers: { cookie: s.cookie }, origin: 'https://app.example' });
    other.send({ type: 'message', clientId: 'x', text: 'am I alice?' });
    expect(await other.waitClose()).toMatchObject({ code: 1008 });
    // Without an Origin (not a browser), the cookie counts for nothing either.
    const bare = await connectWs(env.gw.wsUrl, { headers: { cookie: s.cookie } });
    bare.send({ type: 'message', clientId: 'y', text: 'am I alice?' });
    expect(await bare.waitClose()).toMatchObject({ code: 1008 });
  });

  it('an operator session does not chat; an ended session is refused', async () => {
    const opSession = await signIn(env.gw, op());
    const asOperator = await refusal(connectWs(env.gw.wsUrl, { headers: { cookie: opSession.cookie }, origin: env.gw.url }));
    expect(asOperator?.status).toBe(403);
    const alice = await member('wc-ended');
    const s = await signIn(env.gw, alice.secret);
    expect((await withCookie(env.gw, 'DELETE', '/api/v1/auth/session', s)).status).toBe(204);
    const ended = await refusal(connectWs(env.gw.wsUrl, { headers: { cookie: s.cookie }, origin: env.gw.url }));
    expect(ended?.status).toBe(401);
    const made = await refusal(connectWs(env.gw.wsUrl, { headers: { cookie: 'swb_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, origin: env.gw.url }));
    expect(made?.status).toBe(401);
  });

  it('signing out closes the socket; revoking the token closes it too', async () => {
    const alice = await member('wc-close');
    const s = await signIn(env.gw, alice.secret);
    const ws = await connectWs(env.gw.wsUrl, { headers: { cookie: s.cookie }, origin: env.gw.url });
    await ws.next((f) => f.type === 'hello_ok');
    expect((await withCookie(env.gw, 'DELETE', '/api/v1/auth/session', s)).status).toBe(204);
    expect(await ws.waitClose()).toEqual({ code: 1008, reason: 'signed out' });

    const again = await signIn(env.gw, alice.secret);
    const ws2 = await connectWs(env.gw.wsUrl, { headers: { cookie: again.cookie }, origin: env.gw.url });
    await ws2.next((f) => f.type === 'hello_ok');
    expect((await api(env.gw, 'DELETE', `/api/v1/tokens/${alice.tokenId}`, { token: op() })).status).toBe(200);
    expect((await ws2.waitClose()).code).toBe(1008);
    expect((await withCookie(env.gw, 'GET', '/api/v1/me', again)).status).toBe(401);
  });
});

describe('web chat with a configured public origin, and without a WebSocket account', () => {
  it('only console.publicOrigin carries the cookie, even when allowedOrigins does not list it', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { console: { publicOrigin: 'https://console.example' } } });
    const p = await api(gw, 'POST', '/api/v1/principals', { token: gw.credentials().operatorToken, body: { name: 'po', role: 'member' } });
    const t = await api(gw, 'POST', '/api/v1/tokens', { token: gw.credentials().operatorToken, body: { kind: 'client', principalId: p.json.principal.id } });
    const s = await signIn(gw, t.json.secret as string);
    const ws = await connectWs(gw.wsUrl, { headers: { cookie: s.cookie }, origin: 'https://console.example' });
    expect(await ws.next((f) => f.type === 'hello_ok')).toMatchObject({ principalId: p.json.principal.id });
    await ws.close();
    const listener = await refusal(connectWs(gw.wsUrl, { headers: { cookie: s.cookie }, origin: gw.url }));
    expect(listener?.status).toBe(403);
    // Behind TLS (an https public origin) the cookie is Secure.
    expect(s.setCookie).toMatch(/; Secure$/);
  });

  it('a session ends at console.sessionTtl: its socket closes and its cookie stops working', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { console: { sessionTtl: '1s' } } });
    const p = await api(gw, 'POST', '/api/v1/principals', { token: gw.credentials().operatorToken, body: { name: 'ttl', role: 'member' } });
    const t = await api(gw, 'POST', '/api/v1/tokens', { token: gw.credentials().operatorToken, body: { kind: 'client', principalId: p.json.principal.id } });
    const s = await signIn(gw, t.json.secret as string);
    expect(s.setCookie).toContain('Max-Age=1;');
    const ws = await connectWs(gw.wsUrl, { headers: { cookie: s.cookie }, origin: gw.url });
    await ws.next((f) => f.type === 'hello_ok');
    expect(await ws.waitClose(10_000)).toEqual({ code: 1008, reason: 'signed out' });
    expect((await withCookie(gw, 'GET', '/api/v1/me', s)).status).toBe(401);
    expect((await withCookie(gw, 'GET', '/api/v1/auth/session', s)).status).toBe(401);
  });

  it('says webChat: false without a default WebSocket account', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { channels: { websocket: undefined } } });
    const s = await signIn(gw, gw.credentials().operatorToken);
    expect(s.res.json.webChat).toBe(false);
    expect((await withCookie(gw, 'GET', '/api/v1/auth/session', s)).json.webChat).toBe(false);
  });
});
