import { describe, expect, it } from 'vitest';
import { api, connectWs, runCli } from '@switchboard/testkit';
import { bearer, chat, useGateway } from './helpers.js';

const env = useGateway();

describe('revoking a client token', () => {
  it('closes its open WebSocket at the next frame and refuses it afterwards; other clients carry on', async () => {
    const { gw, fake } = env;
    const created = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'rita', '--role', 'member'], { gateway: gw })).stdout) as {
      secret: string;
      tokenId: string;
    };
    const ws = await connectWs(gw.wsUrl, { headers: bearer(created.secret) });
    expect((await chat(ws, 'r1', 'before')).end).toMatchObject({ type: 'final', text: 'echo: before' });
    const revoked = await api(gw, 'DELETE', `/api/v1/tokens/${created.tokenId}`, { token: gw.credentials().operatorToken });
    expect(revoked.status).toBe(200);
    const calls = fake.requests.length;
    ws.send({ type: 'message', clientId: 'r2', text: 'after' });
    expect(await ws.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'token revoked' });
    expect(fake.requests.length).toBe(calls);
    await expect(connectWs(gw.wsUrl, { headers: bearer(created.secret) })).rejects.toMatchObject({ status: 401 });
    const owner = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    expect((await chat(owner, 'o1', 'still fine')).end).toMatchObject({ type: 'final', text: 'echo: still fine' });
    owner.close();
  });
});

describe('access changes close open sockets at once (no frame needed)', () => {
  it('revoking a token closes its socket; the same principal on another token carries on until it is deleted', async () => {
    const { gw, fake } = env;
    const op = gw.credentials().operatorToken;
    const first = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'sam', '--role', 'member'], { gateway: gw })).stdout) as {
      secret: string;
      tokenId: string;
      principalId: string;
    };
    const principalId = first.principalId;
    const second = await api(gw, 'POST', '/api/v1/tokens', { token: op, body: { kind: 'client', principalId, name: 'sam-second' } });
    expect(second.status).toBe(201);
    const a = await connectWs(gw.wsUrl, { headers: bearer(first.secret) });
    const b = await connectWs(gw.wsUrl, { headers: bearer(second.json.secret as string) });
    await a.next((f) => f.type === 'hello_ok');
    await b.next((f) => f.type === 'hello_ok');
    expect((await api(gw, 'DELETE', `/api/v1/tokens/${first.tokenId}`, { token: op })).status).toBe(200);
    // Closed without sending anything: a silent socket no longer hears the principal's frames.
    expect(await a.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'token revoked' });
    expect((await chat(b, 's1', 'still here')).end).toMatchObject({ type: 'final', text: 'echo: still here' });
    expect(a.frames.some((f) => f.clientId === 's1')).toBe(false);
    const calls = fake.requests.length;
    expect((await api(gw, 'DELETE', `/api/v1/principals/${principalId}`, { token: op })).status).toBe(200);
    expect(await b.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'principal removed' });
    expect(fake.requests.length).toBe(calls);
  });

  it('demoting a principal closes its sockets (the client reconnects with the new role); promoting does not', async () => {
    const { gw } = env;
    const op = gw.credentials().operatorToken;
    const created = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'dana', '--role', 'admin'], { gateway: gw })).stdout) as {
      secret: string;
      principalId: string;
    };
    const principalId = created.principalId;
    const ws = await connectWs(gw.wsUrl, { headers: bearer(created.secret) });
    await ws.next((f) => f.type === 'hello_ok');
    expect((await api(gw, 'PATCH', `/api/v1/principals/${principalId}`, { token: op, body: { role: 'owner' } })).status).toBe(200);
    expect((await chat(ws, 'd1', 'promoted')).end).toMatchObject({ type: 'final' });
    expect((await api(gw, 'PATCH', `/api/v1/principals/${principalId}`, { token: op, body: { role: 'guest' } })).status).toBe(200);
    expect(await ws.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'role changed' });
    const again = await connectWs(gw.wsUrl, { headers: bearer(created.secret) });
    expect((await again.next((f) => f.type === 'hello_ok')).principalId).toBe(principalId);
    await again.close();
  });
});
