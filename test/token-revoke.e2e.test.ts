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
