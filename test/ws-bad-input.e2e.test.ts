import { describe, expect, it } from 'vitest';
import { connectWs, WsHandshakeError } from '@switchboard/testkit';
import { bearer, chat, useGateway } from './helpers.js';

// Only the timer under test is shortened.
const env = useGateway({ config: { channels: { websocket: { accounts: { default: { helloTimeout: '300ms' } } } } } });

async function handshakeStatus(url: string, opts: Parameters<typeof connectWs>[1] = {}): Promise<number> {
  try {
    const ws = await connectWs(url, opts);
    ws.close();
    return 101;
  } catch (err) {
    if (err instanceof WsHandshakeError) return err.status;
    throw err;
  }
}

describe('bad input on the WebSocket', () => {
  it('refuses bad handshakes before the upgrade', async () => {
    const { gw } = env;
    const token = gw.credentials().clientToken;
    expect(await handshakeStatus(gw.wsUrl, { headers: bearer('swb_c_wrong-token-000000000000000000000') })).toBe(401);
    expect(await handshakeStatus(gw.wsUrl, { headers: bearer('short') })).toBe(401);
    expect(await handshakeStatus(`${gw.wsUrl}?token=${token}`)).toBe(400);
    expect(await handshakeStatus(gw.wsUrl, { headers: bearer(token), origin: 'https://evil.example' })).toBe(403);
    expect(await handshakeStatus(gw.wsUrl, { origin: 'null' })).toBe(403);
    expect(await handshakeStatus(gw.wsUrl, { origin: `http://127.0.0.1:${gw.port + 1}` })).toBe(403);
    expect(await handshakeStatus(gw.wsUrl, { headers: bearer(token), origin: 'https://app.example' })).toBe(101);
    const plain = await fetch(`${gw.url}/ws`);
    expect(plain.status).toBe(426);
  });

  it('closes with 1008 when no hello arrives in time, or the hello is wrong', async () => {
    const { gw } = env;
    const silent = await connectWs(gw.wsUrl);
    expect((await silent.waitClose(5_000)).code).toBe(1008);
    const wrong = await connectWs(gw.wsUrl);
    wrong.send({ type: 'hello', token: 'swb_c_not-a-real-token-0000000000000000' });
    expect(await wrong.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'invalid token' });
    const notHello = await connectWs(gw.wsUrl);
    notHello.send({ type: 'message', clientId: 'x', text: 'hi' });
    expect((await notHello.waitClose(5_000)).code).toBe(1008);
    const big = await connectWs(gw.wsUrl);
    big.sendRaw(JSON.stringify({ type: 'hello', token: 'x'.repeat(70 * 1024) }));
    expect((await big.waitClose(5_000)).code).toBe(1009);
  });

  it('answers malformed, unknown and invalid frames with error frames, and closes 1009 on a 2 MiB frame', async () => {
    const { gw } = env;
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    await ws.next((f) => f.type === 'hello_ok');
    ws.sendRaw('{not json');
    expect(await ws.next((f) => f.type === 'error')).toMatchObject({ code: 'bad_frame' });
    ws.send({ type: 'teleport', to: 'mars' });
    expect(await ws.next((f) => f.type === 'error')).toMatchObject({ code: 'unknown_frame' });
    ws.send({ type: 'message', clientId: 'm', text: 42 });
    const invalid = await ws.next((f) => f.type === 'error');
    expect(invalid.code).toBe('bad_frame');
    expect(invalid.message).toContain('text');
    ws.send({ type: 'abort', turnId: 'nope' });
    expect(await ws.next((f) => f.type === 'error')).toMatchObject({ code: 'not_running' });
    ws.sendRaw(Buffer.alloc(2 * 1024 * 1024, 0x61).toString());
    expect((await ws.waitClose(5_000)).code).toBe(1009);
  });

  it('stays up and serves the next client', async () => {
    const { gw } = env;
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    const turn = await chat(ws, 'after-abuse', 'still there?');
    expect(turn.end).toMatchObject({ type: 'final', text: 'echo: still there?' });
    ws.close();
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
  });
});
