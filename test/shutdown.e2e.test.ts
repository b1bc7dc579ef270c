import { describe, expect, it } from 'vitest';
import { connectWs, startGateway, type GatewayProcess } from '@switchboard/testkit';
import { bearer, isEnd, useFakeModel } from './helpers.js';

const env = useFakeModel();

const shutdownLine = (gw: GatewayProcess) => JSON.parse(gw.logs().find((l) => l.includes('"event":"shutdown"'))!) as Record<string, number>;

describe('graceful shutdown (SIGTERM)', () => {
  it('with a long grace period, a running turn completes before the process exits', async () => {
    const { fake } = env;
    const gw = await startGateway({ modelUrl: fake.url, config: { limits: { shutdownGrace: '30s' } } });
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    const start = fake.requests.length;
    fake.enqueue({ holdAfterEvents: 4, text: 'Finished during the grace period.' });
    ws.send({ type: 'message', clientId: 'g1', text: 'take your time' });
    await fake.waitForRequests(start + 1);
    await ws.next((f) => f.type === 'delta');
    gw.child.kill('SIGTERM');
    await gw.waitForLog(/"event":"stopping"/);
    // New connections are refused while the gateway drains.
    const refused = await fetch(`${gw.url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    expect([0, 503]).toContain(refused);
    fake.release();
    const end = await ws.next((f) => isEnd(f) && f.clientId === 'g1');
    expect(end).toMatchObject({ type: 'final', text: 'Finished during the grace period.' });
    expect((await ws.waitClose(10_000)).code).toBe(1001);
    expect((await gw.exited).code).toBe(0);
    expect(shutdownLine(gw)).toMatchObject({ runningAtSignal: 1, finished: 1, suspended: 0 });
  });

  it('with a short grace period, the turn is suspended and answered once after the next start', async () => {
    const { fake } = env;
    let gw = await startGateway({ modelUrl: fake.url, config: { limits: { shutdownGrace: '300ms' } } });
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    const start = fake.requests.length;
    fake.enqueue({ holdAfterEvents: 4, text: 'This attempt never finishes.' });
    ws.send({ type: 'message', clientId: 'g2', text: 'will you survive a restart?' });
    await fake.waitForRequests(start + 1);
    gw.child.kill('SIGTERM');
    expect((await ws.waitClose(10_000)).code).toBe(1001);
    expect((await gw.exited).code).toBe(0);
    expect(shutdownLine(gw)).toMatchObject({ runningAtSignal: 1, finished: 0, suspended: 1 });
    expect(ws.frames.filter((f) => isEnd(f))).toHaveLength(0);
    fake.release();

    gw = await gw.restart();
    const ws2 = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    ws2.send({ type: 'hello', cursor: 0 });
    const end = await ws2.next((f) => isEnd(f) && f.clientId === 'g2', 20_000);
    expect(end).toMatchObject({ type: 'final', text: 'echo: will you survive a restart?' });
    // Re-sending the message does not answer it twice.
    const calls = fake.requests.length;
    ws2.send({ type: 'message', clientId: 'g2', text: 'will you survive a restart?' });
    expect(await ws2.next((f) => f.type === 'accepted' && f.clientId === 'g2')).toMatchObject({ duplicate: true });
    await ws2.next((f) => isEnd(f) && f.clientId === 'g2');
    expect(fake.requests.length).toBe(calls);
    ws2.close();
  });
});
