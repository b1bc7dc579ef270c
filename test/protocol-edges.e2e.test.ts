import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { api, connectWs, startGateway } from '@switchboard/testkit';
import { bearer, chat, useGateway } from './helpers.js';
import { rawUpgrade } from './ws-raw.js';

/** Sends one raw HTTP/1.1 request and resolves with the whole answer once the server closes. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.on('connect', () => socket.write(text));
  });
}

// Where the gateway did not do what docs/protocol.md and docs/security.md say (issue 10, point 19).

const env = useGateway();

describe('WebSocket protocol edges', () => {
  it('refuses a binary frame with close 1003 and runs nothing', async () => {
    const { gw, fake } = env;
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    await ws.next((f) => f.type === 'hello_ok');
    const calls = fake.requests.length;
    ws.sendRaw(Buffer.from(JSON.stringify({ type: 'message', clientId: 'bin-1', text: 'binary' })));
    expect(await ws.waitClose(5_000)).toMatchObject({ code: 1003 });
    expect(ws.frames.some((f) => f.clientId === 'bin-1')).toBe(false);
    expect(fake.requests.length).toBe(calls);
  });

  it('sends hello_ok before the replayed finals', async () => {
    const { gw } = env;
    const token = gw.credentials().clientToken;
    const first = await connectWs(gw.wsUrl, { headers: bearer(token) });
    const turn = await chat(first, 'replay-1', 'remember me');
    await first.close();
    const again = await connectWs(gw.wsUrl);
    again.send({ type: 'hello', token, cursor: (turn.end.cursor as number) - 1 });
    const a = await again.next();
    const b = await again.next();
    expect([a.type, b.type]).toEqual(['hello_ok', 'final']);
    expect(b).toMatchObject({ clientId: 'replay-1', text: 'echo: remember me' });
    expect(a.cursor).toBe(turn.end.cursor);
    await again.close();
  });
});

describe('HTTP edges', () => {
  it('answers upgrade requests it does not upgrade as ordinary HTTP requests', async () => {
    const { gw } = env;
    const h2c = (path: string) =>
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n`;
    expect(await rawRequest(gw.port, h2c('/healthz'))).toMatch(/^HTTP\/1\.1 200[\s\S]*"ok":true/);
    expect(await rawRequest(gw.port, h2c('/api/v1/sessions'))).toMatch(/^HTTP\/1\.1 401[\s\S]*"code":"unauthorized"/);
    expect(await rawRequest(gw.port, h2c('/ws'))).toMatch(/^HTTP\/1\.1 426/);
    const elsewhere = await rawUpgrade(gw.port, '127.0.0.1', '/not-a-socket');
    expect(elsewhere.status).toBe(404);
    elsewhere.socket.destroy();
  });

  it('answers an over-long path with 414 { code, message }', async () => {
    const { gw } = env;
    const op = gw.credentials().operatorToken;
    for (const path of [`/api/v1/sessions/${'a'.repeat(5000)}`, `/${'b'.repeat(5000)}`]) {
      const res = await api(gw, 'GET', path, { token: op });
      expect(res.status).toBe(414);
      expect(Object.keys(res.json).sort()).toEqual(['code', 'message']);
      expect(res.json.code).toBe('uri_too_long');
    }
  });

  it('answers a text/plain body with 415 { code, message }', async () => {
    const { gw } = env;
    const res = await api(gw, 'POST', '/api/v1/principals', {
      token: gw.credentials().operatorToken,
      body: 'name=eve',
      headers: { 'content-type': 'text/plain' },
    });
    expect(res.status).toBe(415);
    expect(res.json).toEqual({ code: 'unsupported_media_type', message: expect.stringContaining('application/json') });
  });

  it('/readyz without a token says only whether it is ready; channel details need a read token', async () => {
    const { gw } = env;
    const open = await api(gw, 'GET', '/readyz');
    expect(open.status).toBe(200);
    expect(open.json).toEqual({ ready: true, state: 'up' });
    const reader = await api(gw, 'POST', '/api/v1/tokens', {
      token: gw.credentials().operatorToken,
      body: { kind: 'operator', name: 'ready-reader', scopes: ['read'] },
    });
    expect(reader.status).toBe(201);
    const detailed = await api(gw, 'GET', '/readyz', { token: reader.json.secret as string });
    expect(detailed.status).toBe(200);
    expect(detailed.json).toMatchObject({
      ready: true,
      state: 'up',
      database: { engine: 'sqlite', state: 'up' },
      channels: { 'websocket:default': { state: 'up', required: false } },
    });
    const pairingOnly = await api(gw, 'POST', '/api/v1/tokens', {
      token: gw.credentials().operatorToken,
      body: { kind: 'operator', name: 'ready-pairing', scopes: ['pairing'] },
    });
    expect((await api(gw, 'GET', '/readyz', { token: pairingOnly.json.secret as string })).status).toBe(403);
    expect((await api(gw, 'GET', '/readyz', { token: 'swb_o_not-a-real-token-xxxxxxxxxxxx' })).status).toBe(401);
  });

  it('with gateway.readyzDetails "public", /readyz shows channel details to anyone', async () => {
    const open = await startGateway({ modelUrl: env.fake.url, config: { gateway: { readyzDetails: 'public' } } });
    const res = await api(open, 'GET', '/readyz');
    expect(res.json).toMatchObject({ ready: true, state: 'up', channels: { 'websocket:default': { state: 'up' } } });
    await open.stop();
  });
});
