import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, connectWs, type GatewayProcess, type PgServer, startGateway, startPostgres } from '@switchboard/testkit';
import { bearer, chat, isEnd, useFakeModel } from './helpers.js';

// Issue 19, acceptance 4: PostgreSQL restarts under a running gateway.
let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.destroy();
});
const model = useFakeModel();

async function readyz(gw: GatewayProcess) {
  return api(gw, 'GET', '/readyz');
}

describe('a PostgreSQL restart under a running gateway', () => {
  it('fails requests cleanly, reports the database down then up, reconnects, and loses no turn', async () => {
    const { fake } = model;
    const url = await server.createDatabase();
    const gw = await startGateway({
      modelUrl: fake.url,
      storage: { kind: 'postgres', url, healthInterval: '200ms', connectionTimeout: '1s' },
      config: { gateway: { readyzDetails: 'public' } },
    });
    // Start-up is over (interrupted turns resumed) before anything else happens.
    await gw.waitForLog((l) => l.includes('"event":"listening"'));
    const { clientToken, operatorToken } = gw.credentials();
    const ws = await connectWs(gw.wsUrl, { headers: bearer(clientToken) });
    await ws.next((f) => f.type === 'hello_ok');
    const up = await readyz(gw);
    expect(up.status).toBe(200);
    expect(up.json).toMatchObject({ ready: true, database: { engine: 'postgres', state: 'up' } });

    // A turn held mid-stream by the model.
    fake.enqueue({ holdAfterEvents: 4, text: 'This answer is cut off by the outage.' });
    const held = fake.requests.length;
    ws.send({ type: 'message', clientId: 'o1', text: 'a long question' });
    await ws.next((f) => f.type === 'delta' && f.clientId === 'o1');
    await fake.waitForRequests(held + 1);

    await server.stop();
    await gw.waitForLog((l) => l.includes('"event":"storage_down"'));
    const down = await readyz(gw);
    expect(down.status).toBe(503);
    expect(down.json).toMatchObject({ ready: false, state: 'down', database: { engine: 'postgres', state: 'down' } });
    expect(typeof down.json.database.error).toBe('string');
    expect(down.text).not.toContain(server.password);
    // With a token the answer is the same 503 (the token cannot be checked without the database).
    const downWithToken = await api(gw, 'GET', '/readyz', { token: operatorToken });
    expect(downWithToken.status).toBe(503);

    // A message during the outage is refused, against its client id, with a code the client can act on.
    ws.send({ type: 'message', clientId: 'o2', text: 'sent during the outage' });
    const refused = await ws.next((f) => f.clientId === 'o2');
    expect(refused).toMatchObject({ type: 'error', code: 'storage_unavailable', clientId: 'o2' });
    // The control API answers 503 with a clear body.
    const sessions = await api(gw, 'GET', '/api/v1/sessions', { token: operatorToken });
    expect(sessions.status).toBe(503);
    expect(sessions.json).toMatchObject({ code: 'storage_unavailable' });
    expect(sessions.headers.get('retry-after')).toBe('5');

    // The held turn's answer arrives while its end cannot be stored: the turn is kept, not failed.
    fake.release();
    await gw.waitForLog((l) => l.includes('turn cut off by a storage outage'));
    expect(ws.frames.filter((f) => isEnd(f) && f.clientId === 'o1')).toHaveLength(0);

    await server.start();
    await gw.waitForLog((l) => l.includes('"event":"storage_up"'), 20_000);
    const again = await readyz(gw);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ ready: true, database: { engine: 'postgres', state: 'up' } });
    expect(again.json.database.error).toBeUndefined();

    // The interrupted turn resumes and ends with exactly one final.
    const final = await ws.next((f) => isEnd(f) && f.clientId === 'o1', 20_000);
    expect(final).toMatchObject({ type: 'final', text: 'echo: a long question' });
    // The refused message, sent again, is answered.
    const retried = await chat(ws, 'o2', 'sent during the outage');
    expect(retried.accepted).toMatchObject({ type: 'accepted', duplicate: false });
    expect(retried.end).toMatchObject({ type: 'final', text: 'echo: sent during the outage' });
    expect(ws.frames.filter((f) => isEnd(f) && f.clientId === 'o1')).toHaveLength(1);
    const recovered = await api(gw, 'GET', '/api/v1/sessions', { token: operatorToken });
    expect(recovered.status).toBe(200);

    // Nothing crashed, each transition was logged once, and the password never reached a log line.
    expect(gw.child.exitCode).toBeNull();
    expect(gw.logs().filter((l) => l.includes('"event":"storage_down"'))).toHaveLength(1);
    expect(gw.logs().filter((l) => l.includes('"event":"storage_up"'))).toHaveLength(1);
    expect(gw.logs().join('\n')).not.toContain(server.password);
    ws.close();
  });
});
