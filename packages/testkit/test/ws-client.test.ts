import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWs, WsHandshakeError } from '../src/index.js';

let server: Server;
let url: string;
const wss = new WebSocketServer({ noServer: true });

beforeAll(async () => {
  server = createServer((_req, res) => res.writeHead(404).end());
  // Auth and Origin checks before the 101, the way the gateway is meant to do them.
  server.on('upgrade', (req, socket, head) => {
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"error":"${text}"}`);
    };
    if (req.headers.authorization !== 'Bearer good') return refuse(401, 'Unauthorized');
    if (req.headers.origin !== undefined && req.headers.origin !== 'https://app.example') return refuse(403, 'Forbidden');
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.send(JSON.stringify({ type: 'hello', protocol: ws.protocol }));
      ws.on('message', (data) => {
        const text = String(data);
        if (text === 'bye') return ws.close(4001, 'asked to leave');
        ws.send(JSON.stringify({ type: 'note', n: 1 }));
        ws.send(text.startsWith('{') ? JSON.stringify({ type: 'echo', got: JSON.parse(text) }) : `plain:${text}`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
});

afterAll(async () => {
  for (const c of wss.clients) c.terminate();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('connectWs', () => {
  it('rejects with the HTTP status of a refused upgrade (401, 403)', async () => {
    const noToken = await connectWs(url).catch((e: unknown) => e);
    expect(noToken).toBeInstanceOf(WsHandshakeError);
    expect((noToken as WsHandshakeError).status).toBe(401);
    expect((noToken as WsHandshakeError).body).toContain('Unauthorized');
    const evil = await connectWs(url, { headers: { authorization: 'Bearer good' }, origin: 'https://evil.example' }).catch((e: unknown) => e);
    expect(evil).toMatchObject({ status: 403 });
  });

  it('opens with an allowed origin and protocols, and queues parsed frames', async () => {
    const ws = await connectWs(url, { headers: { authorization: 'Bearer good' }, origin: 'https://app.example', protocols: ['swb.v1'] });
    expect(await ws.next()).toEqual({ type: 'hello', protocol: 'swb.v1' });
    ws.send({ type: 'msg', text: 'hi' });
    // take the echo first; the earlier note stays queued for the next call
    expect(await ws.next((f) => f.type === 'echo')).toEqual({ type: 'echo', got: { type: 'msg', text: 'hi' } });
    expect(await ws.next()).toEqual({ type: 'note', n: 1 });
    ws.sendRaw('raw text');
    expect(await ws.next((f) => f.raw !== undefined)).toEqual({ raw: 'plain:raw text' });
    expect(ws.frames).toHaveLength(5);
    expect(await ws.close()).toEqual({ code: 1000, reason: '' });
  });

  it('reports the server close code; next() rejects once closed, and times out otherwise', async () => {
    const ws = await connectWs(url, { headers: { authorization: 'Bearer good' } });
    await ws.next((f) => f.type === 'hello');
    await expect(ws.next((f) => f.type === 'never', 200)).rejects.toThrow(/timed out after 200 ms/);
    ws.sendRaw('bye');
    expect(await ws.waitClose()).toEqual({ code: 4001, reason: 'asked to leave' });
    await expect(ws.next((f) => f.type === 'never')).rejects.toThrow(/closed \(4001/);
  });
});
