import { connect } from 'node:net';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startGateway, stopAllGateways, type GatewayProcess } from '@switchboard/testkit';

// Attempts to get around the failed-auth lockout (issue 10, point 18). Default limits: 10 wrong
// tokens per 60 s lock an address out for 5 min. Each test uses its own loopback source address.

const wrong = (i: number) => `swb_o_wrong-token-number-${i}-xxxxxxxxxxxxxxxx`;

/** Writes `count` pipelined requests in one TCP write from `address`; resolves with every answer's status, in order. */
function pipelined(gw: GatewayProcess, address: string, tokens: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: gw.port, localAddress: address });
    let text = '';
    const statuses = () => [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    socket.on('error', reject);
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      if (statuses().length >= tokens.length) {
        socket.destroy();
        resolve(statuses());
      }
    });
    socket.on('close', () => resolve(statuses()));
    socket.on('connect', () => {
      socket.write(tokens.map((t) => `GET /api/v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${t}\r\n\r\n`).join(''));
    });
  });
}

/** A control-API GET from a chosen local source address, with extra headers. */
function from(gw: GatewayProcess, address: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  const url = new URL(`${gw.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers, localAddress: address }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a WebSocket from `address` and sends a hello; resolves with the close reason, or 'ok'. */
function helloFrom(gw: GatewayProcess, address: string, token: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(gw.wsUrl, { localAddress: address, headers });
    ws.once('error', reject);
    ws.once('open', () => ws.send(JSON.stringify({ type: 'hello', token })));
    ws.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type?: string }).type === 'hello_ok') {
        ws.close();
        resolve('ok');
      }
    });
    ws.once('close', (_code, reason) => resolve(reason.toString('utf8')));
  });
}

/** Resolves with the upgrade's HTTP status (101 when it opened). */
function upgradeFrom(gw: GatewayProcess, address: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(gw.wsUrl, { headers, localAddress: address });
    ws.once('open', () => {
      ws.terminate();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      resolve(res.statusCode ?? 0);
    });
    ws.once('error', reject);
  });
}

afterAll(async () => {
  await stopAllGateways();
});

describe('lockout on a default gateway', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway();
  });

  it('200 wrong tokens pipelined in one TCP write: at most 10 are verified, and the right token after them is locked out', async () => {
    const tokens = [...Array.from({ length: 200 }, (_, i) => wrong(i)), gw.credentials().operatorToken];
    const statuses = await pipelined(gw, '127.0.7.1', tokens);
    expect(statuses).toHaveLength(201);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(statuses.at(-1)).toBe(429);
  });

  it('wrong tokens from 10,000 other addresses do not evict an active lockout', async () => {
    const victim = '127.0.7.3';
    for (let i = 0; i < 10; i++) expect(await from(gw, victim, '/api/v1/sessions', { authorization: `Bearer ${wrong(i)}` })).toBe(401);
    expect(await from(gw, victim, '/api/v1/sessions', { authorization: `Bearer ${gw.credentials().operatorToken}` })).toBe(429);
    // One wrong token from each of 10,000 other loopback addresses, 50 at a time.
    const others = Array.from({ length: 10_000 }, (_, i) => `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`);
    for (let i = 0; i < others.length; i += 50) {
      const statuses = await Promise.all(others.slice(i, i + 50).map((a, j) => from(gw, a, '/api/v1/sessions', { authorization: `Bearer ${wrong(i + j)}` })));
      expect(statuses.every((st) => st === 401 || st === 429)).toBe(true);
    }
    expect(await from(gw, victim, '/api/v1/sessions', { authorization: `Bearer ${gw.credentials().operatorToken}` })).toBe(429);
  });
});

describe('behind a reverse proxy (gateway.trustedProxies)', () => {
  let gw: GatewayProcess;
  const proxy = '127.0.8.1';
  beforeAll(async () => {
    gw = await startGateway({ config: { gateway: { trustedProxies: [proxy] } } });
  });

  it('keys the lockout on the client address the trusted proxy reports, and only on that', async () => {
    const op = gw.credentials().operatorToken;
    const xff = (v: string) => ({ 'x-forwarded-for': v });
    for (let i = 0; i < 10; i++) expect(await from(gw, proxy, '/api/v1/sessions', { ...xff('203.0.113.5'), authorization: `Bearer ${wrong(i)}` })).toBe(401);
    expect(await from(gw, proxy, '/api/v1/sessions', { ...xff('203.0.113.5'), authorization: `Bearer ${op}` })).toBe(429);
    // A left-most entry the client wrote itself does not pick the key: the proxy appended the real one.
    expect(await from(gw, proxy, '/api/v1/sessions', { ...xff('198.51.100.7, 203.0.113.5'), authorization: `Bearer ${op}` })).toBe(429);
    expect(await upgradeFrom(gw, proxy, { ...xff('203.0.113.5'), authorization: `Bearer ${gw.credentials().clientToken}` })).toBe(429);
    expect(await helloFrom(gw, proxy, gw.credentials().clientToken, xff('203.0.113.5'))).toBe('too many failed attempts');
    // Other clients behind the same proxy are not one address.
    expect(await from(gw, proxy, '/api/v1/sessions', { ...xff('203.0.113.6'), authorization: `Bearer ${op}` })).toBe(200);
    expect(await upgradeFrom(gw, proxy, { ...xff('203.0.113.6'), authorization: `Bearer ${gw.credentials().clientToken}` })).toBe(101);
    expect(await helloFrom(gw, proxy, gw.credentials().clientToken, xff('203.0.113.6'))).toBe('ok');
    // The proxy's own address was never locked.
    expect(await from(gw, proxy, '/api/v1/sessions', { authorization: `Bearer ${op}` })).toBe(200);
    // A process that is not a trusted proxy cannot choose its key with X-Forwarded-For.
    expect(await from(gw, '127.0.8.2', '/api/v1/sessions', { ...xff('203.0.113.5'), authorization: `Bearer ${op}` })).toBe(200);
  });
});
