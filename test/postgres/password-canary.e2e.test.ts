import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, connectWs, type PgServer, runCli, startGateway, startPostgres } from '@switchboard/testkit';
import { bearer, chat, useFakeModel } from '../helpers.js';

// Issue 19: the PostgreSQL password never leaves the config — not in logs, /readyz, doctor or an error.
let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server?.destroy();
});
const model = useFakeModel();

describe('the PostgreSQL password', () => {
  it('never appears in the logs, /readyz, doctor output or a start-up error', async () => {
    const url = await server.createDatabase();
    expect(url).toContain(server.password);
    // Given through DATABASE_URL, as the example config does.
    const gw = await startGateway({ modelUrl: model.fake.url, storage: { kind: 'postgres', url: '${DATABASE_URL}' }, env: { DATABASE_URL: url } });
    const { clientToken, operatorToken } = gw.credentials();
    const ws = await connectWs(gw.wsUrl, { headers: bearer(clientToken) });
    await ws.next((f) => f.type === 'hello_ok');
    expect((await chat(ws, 'c1', 'hello')).end).toMatchObject({ type: 'final', text: 'echo: hello' });
    ws.close();
    const ready = await api(gw, 'GET', '/readyz', { token: operatorToken });
    expect(ready.status).toBe(200);
    expect(ready.json.database).toEqual({ engine: 'postgres', state: 'up' });
    expect(ready.text).not.toContain(server.password);
    const opened = await gw.waitForLog((l) => l.includes('"event":"storage_open"'));
    expect(opened).toContain('postgres://postgres:***@127.0.0.1');

    const doctor = await runCli(['doctor'], { gateway: gw });
    expect(doctor.stdout).toMatch(/database: PostgreSQL at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\S+ reachable, migrations current/);
    expect(doctor.stdout).toContain('1 of 1 migrations applied');
    expect(doctor.stdout + doctor.stderr).not.toContain(server.password);
    await gw.stop();
    expect(gw.logs().join('\n')).not.toContain(server.password);

    // A wrong password: a start-up error naming storage.url and the server's reason, echoing neither password.
    const wrong = `wrong-${server.password.split('').reverse().join('')}`;
    const badUrl = url.replace(`:${encodeURIComponent(server.password)}@`, `:${wrong}@`);
    expect(badUrl).not.toBe(url);
    const failed = await startGateway({ modelUrl: model.fake.url, storage: { kind: 'postgres', url: badUrl } }).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(failed).toMatch(/storage\.url: cannot open the PostgreSQL database at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1/);
    expect(failed).toMatch(/password authentication failed/);
    expect(failed).toMatch(/code 78/);
    expect(failed).not.toContain(wrong);
    expect(failed).not.toContain(server.password);
    const badDoctor = await runCli(['doctor'], { env: { DATABASE_URL: badUrl }, gateway: gw });
    expect(badDoctor.stdout).toMatch(/database: PostgreSQL at postgres:\/\/postgres:\*\*\*@.* — password authentication failed/);
    expect(badDoctor.stdout).not.toContain(server.password);
    expect(badDoctor.stdout).not.toContain(wrong);
  });
});
