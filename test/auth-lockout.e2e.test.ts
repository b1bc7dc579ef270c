import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { api, connectWs, startGateway, stopAllGateways, WsHandshakeError, type GatewayProcess } from '@switchboard/testkit';

// Failed-auth rate limiting (DESIGN.md §8) on a gateway of its own: the default limits are
// 10 wrong tokens per 60 s, then a 5 min lockout of the address. Every test runs from its own
// loopback source address (127.0.0.x), since the limiter keys on the socket address.

let gw: GatewayProcess;
let op: string;
let client: string;

/** A control-API request from a chosen local source address. */
function from(address: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const url = new URL(`${gw.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers, localAddress: address }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const wrong = (i: number) => `swb_o_wrong-token-number-${i}-xxxxxxxxxxxxxxxx`;

/** Opens a WebSocket from `address`; resolves with the handshake status (101 when it opened) and the socket. */
function wsFrom(address: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; ws?: WebSocket }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(gw.wsUrl, { headers, localAddress: address });
    ws.once('open', () => resolve({ status: 101, headers: {}, ws }));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      res.resume();
      ws.terminate();
    });
    ws.once('error', (err) => reject(err));
  });
}

/** Sends a hello with `token` from `address` and resolves with the close code and reason, or 'ok' on hello_ok. */
async function helloFrom(address: string, token: string): Promise<{ code: number; reason: string } | 'ok'> {
  const { ws } = await wsFrom(address);
  if (!ws) throw new Error('expected the upgrade to succeed without a header');
  return new Promise((resolve) => {
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { type?: string };
      if (frame.type === 'hello_ok') {
        ws.close();
        resolve('ok');
      }
    });
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') }));
    ws.send(JSON.stringify({ type: 'hello', token }));
  });
}

beforeAll(async () => {
  gw = await startGateway();
  op = gw.credentials().operatorToken;
  client = gw.credentials().clientToken;
});
afterAll(async () => {
  await stopAllGateways();
});

describe('failed-auth lockout', () => {
  it('requests without a token never count; 10 wrong tokens lock the address out on the API and WebSocket alike', async () => {
    const me = '127.0.0.2';
    for (let i = 0; i < 25; i++) expect((await from(me, '/api/v1/sessions')).status).toBe(401);
    for (let i = 0; i < 3; i++) {
      const open = await wsFrom(me);
      expect(open.status).toBe(101);
      open.ws?.terminate();
    }
    expect((await from(me, '/api/v1/sessions', bearer(op))).status).toBe(200);

    for (let i = 0; i < 9; i++) expect((await from(me, '/api/v1/sessions', bearer(wrong(i)))).status).toBe(401);
    // The tenth wrong token arrives by WebSocket header: one counter for both doors.
    expect((await wsFrom(me, bearer('swb_c_wrong-client-token-xxxxxxxxxxxx'))).status).toBe(401);

    const locked = await from(me, '/api/v1/sessions', bearer(op));
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({ code: 'too_many_failed_attempts' });
    const retry = Number(locked.headers['retry-after']);
    expect(retry).toBeGreaterThan(200);
    expect(retry).toBeLessThanOrEqual(300);
    // A spoofed X-Forwarded-For changes nothing: the key is the socket address.
    expect((await from(me, '/api/v1/sessions', { ...bearer(op), 'x-forwarded-for': '203.0.113.9' })).status).toBe(429);
    expect((await from(me, '/api/v1/sessions', { ...bearer(op), 'x-real-ip': '203.0.113.9', forwarded: 'for=203.0.113.9' })).status).toBe(429);

    const upgrade = await wsFrom(me, bearer(client));
    expect(upgrade.status).toBe(429);
    expect(Number(upgrade.headers['retry-after'])).toBeGreaterThan(200);
    expect(await helloFrom(me, client)).toEqual({ code: 1008, reason: 'too many failed attempts' });
    // A request without a token is still just unauthenticated.
    expect((await from(me, '/api/v1/sessions')).status).toBe(401);

    // Another address is not affected, whatever it claims in X-Forwarded-For.
    expect((await from('127.0.0.3', '/api/v1/sessions', { ...bearer(op), 'x-forwarded-for': me })).status).toBe(200);
    expect(await helloFrom('127.0.0.3', client)).toBe('ok');
  });

  it('wrong tokens in hello frames count too', async () => {
    const me = '127.0.0.4';
    for (let i = 0; i < 10; i++) expect(await helloFrom(me, `swb_c_bad-hello-${i}-xxxxxxxxxxxxxxxx`)).toEqual({ code: 1008, reason: 'invalid token' });
    expect(await helloFrom(me, client)).toEqual({ code: 1008, reason: 'too many failed attempts' });
    const res = await from(me, '/api/v1/sessions', bearer(op));
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('the test harness address (127.0.0.1) was never locked', async () => {
    expect((await api(gw, 'GET', '/api/v1/sessions', { token: op })).status).toBe(200);
    const ws = await connectWs(gw.wsUrl, { headers: bearer(client) });
    expect((await ws.next((f) => f.type === 'hello_ok')).type).toBe('hello_ok');
    await ws.close();
    await expect(connectWs(gw.wsUrl, { headers: bearer('swb_c_not-a-real-token-xxxxxxxxxxxx') })).rejects.toBeInstanceOf(WsHandshakeError);
  });
});
