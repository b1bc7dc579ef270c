import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, connectWs, startGateway, type GatewayProcess } from '@switchboard/testkit';
import { bearer, useGateway } from './helpers.js';
import { PING, frameHeader, rawUpgrade, rssOf, serverVerdict, type RawUpgrade } from './ws-raw.js';

// Unauthenticated WebSocket connections (issue 10, point 13): each may cost the gateway at most
// 64 KiB of buffered frame, their number is capped per address and per account, and slow HTTP
// clients are cut off by explicit server timeouts.

const env = useGateway();

/** The `i`-th distinct loopback source address from 127.0.1.1 on. */
const source = (i: number) => `127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}`;

describe('unauthenticated sockets on a default gateway', () => {
  it('500 unauthenticated sockets each sending a nearly-1-MiB frame grow the RSS by less than 50 MB', async () => {
    const { gw } = env;
    const payload = Buffer.alloc(1_000_000, 0x61);
    const header = frameHeader(0x1, payload.length, false);
    const open: RawUpgrade[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const next = await Promise.all(Array.from({ length: 100 }, (_, j) => rawUpgrade(gw.port, source(batch * 100 + j))));
      open.push(...next);
    }
    expect(open.map((u) => u.status).every((s) => s === 101)).toBe(true);
    const before = await rssOf(gw.pid);
    // Each socket sends the first fragment of a message and then a ping: a pong means the server
    // parsed (and holds) the fragment; a close means it refused it.
    const verdicts = await Promise.all(
      open.map((u) => {
        const verdict = serverVerdict(u.socket);
        u.socket.write(header);
        u.socket.write(payload);
        u.socket.write(PING);
        return verdict;
      }),
    );
    const after = await rssOf(gw.pid);
    for (const u of open) u.socket.destroy();
    // No socket's fragment was held: each was refused (1009) from its frame header.
    expect(verdicts.filter((v) => v === 'pong')).toHaveLength(0);
    expect(after - before, `RSS grew by ${Math.round((after - before) / 1e6)} MB`).toBeLessThan(50 * 1024 * 1024);
    expect((await api(gw, 'GET', '/healthz')).status).toBe(200);
  });

  it('a socket that authenticates by hello keeps the 64 KiB frame limit; a header-authenticated one gets maxPayload', async () => {
    const { gw } = env;
    const token = gw.credentials().clientToken;
    const text = 'x'.repeat(90_000);
    const byHeader = await connectWs(gw.wsUrl, { headers: bearer(token) });
    await byHeader.next((f) => f.type === 'hello_ok');
    byHeader.send({ type: 'message', clientId: 'big-header', text });
    expect(await byHeader.next((f) => f.type === 'accepted' && f.clientId === 'big-header')).toMatchObject({ duplicate: false });
    await byHeader.close();

    const byHello = await connectWs(gw.wsUrl);
    byHello.send({ type: 'hello', token });
    await byHello.next((f) => f.type === 'hello_ok');
    byHello.send({ type: 'message', clientId: 'big-hello', text });
    expect((await byHello.waitClose(5_000)).code).toBe(1009);
    expect(byHello.frames.some((f) => f.clientId === 'big-hello')).toBe(false);
  });

  it('caps unauthenticated sockets per address (maxUnauthenticatedPerAddress, default 8); authenticated upgrades still pass', async () => {
    const { gw } = env;
    const me = '127.0.3.1';
    const held: RawUpgrade[] = [];
    for (let i = 0; i < 8; i++) {
      const u = await rawUpgrade(gw.port, me);
      expect(u.status).toBe(101);
      held.push(u);
    }
    const refused = await rawUpgrade(gw.port, me);
    expect(refused.status).toBe(429);
    expect(refused.head).toContain('"code":"too_many_unauthenticated"');
    expect(refused.head).toContain('maxUnauthenticatedPerAddress');
    refused.socket.destroy();
    const authed = await rawUpgrade(gw.port, me, '/ws', bearer(gw.credentials().clientToken));
    expect(authed.status).toBe(101);
    authed.socket.destroy();
    expect((await rawUpgrade(gw.port, '127.0.3.2')).status).toBe(101);
    for (const u of held) u.socket.destroy();
  });
});

describe('a gateway with tight caps and timeouts', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({
      modelUrl: env.fake.url,
      config: {
        gateway: { headersTimeout: '1s', requestTimeout: '2s', connectionTimeout: '120s' },
        channels: { websocket: { accounts: { capped: { maxUnauthenticated: 3, maxUnauthenticatedPerAddress: 2 } } } },
      },
    });
  });
  afterAll(async () => {
    await gw?.stop();
  });

  it('caps unauthenticated sockets per account (maxUnauthenticated); authenticated upgrades still pass', async () => {
    const held: RawUpgrade[] = [];
    for (let i = 0; i < 3; i++) {
      const u = await rawUpgrade(gw.port, `127.0.5.${i + 1}`, '/ws/capped');
      expect(u.status).toBe(101);
      held.push(u);
    }
    const refused = await rawUpgrade(gw.port, '127.0.5.9', '/ws/capped');
    expect(refused.status).toBe(503);
    expect(refused.head).toContain('"code":"too_many_unauthenticated"');
    expect(refused.head).toContain('channels.websocket.accounts.capped.maxUnauthenticated');
    refused.socket.destroy();
    // The default account has its own count.
    const other = await rawUpgrade(gw.port, '127.0.5.9', '/ws');
    expect(other.status).toBe(101);
    other.socket.destroy();
    const authed = await rawUpgrade(gw.port, '127.0.5.9', '/ws/capped', bearer(gw.credentials().clientToken));
    expect(authed.status).toBe(101);
    authed.socket.destroy();
    for (const u of held) u.socket.destroy();
  });

  it('closes a connection whose request headers never finish (gateway.headersTimeout)', async () => {
    const socket = connect({ host: '127.0.0.1', port: gw.port, localAddress: '127.0.6.1' });
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    socket.on('error', () => undefined);
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1');
    await new Promise((resolve) => socket.once('close', resolve));
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });
});
