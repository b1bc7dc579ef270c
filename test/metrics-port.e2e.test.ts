import { describe, expect, it } from 'vitest';
import { startGateway, type GatewayProcess } from '@switchboard/testkit';
import { chat, connectClient, useFakeModel } from './helpers.js';
import { parseMetrics, sampleValue } from './metrics-helpers.js';

// Issue 18, acceptance 1 (the other door): with `metrics.port` the metrics have a port of their
// own, bound to loopback unless `metrics.host` says otherwise (with a warning), answering without
// a token — and the gateway's port no longer serves them. `metrics.enabled: false` serves none.
const env = useFakeModel();

/** The metrics port's URL, from the gateway's `metrics_listening` line. */
async function metricsUrl(gw: GatewayProcess): Promise<string> {
  const line = await gw.waitForLog((l) => l.includes('"event":"metrics_listening"'));
  return (JSON.parse(line) as { url: string }).url;
}

describe('metrics on a port of their own', () => {
  it('answers without a token on loopback, counts a turn, and the gateway port has no /metrics', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { metrics: { port: 0 } } });
    const url = await metricsUrl(gw);
    expect(new URL(url).hostname).toBe('127.0.0.1');
    expect(gw.logs().some((l) => l.includes('metrics_public_bind'))).toBe(false);

    const before = parseMetrics(await (await fetch(`${url}/metrics`)).text());
    const ws = await connectClient(gw);
    expect((await chat(ws, 'p1', 'hello')).end.type).toBe('final');
    ws.close();
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(200);
    const after = parseMetrics(await res.text());
    const labels = { channel: 'websocket', account: 'default', outcome: 'completed' };
    expect(sampleValue(after, 'switchboard_turns_total', labels) - sampleValue(before, 'switchboard_turns_total', labels)).toBe(1);

    expect((await fetch(`${url}/api/v1/stats`)).status).toBe(404);
    const onGateway = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.credentials().operatorToken}` } });
    expect(onGateway.status).toBe(404);
    // The metrics port closes with the gateway.
    expect(await gw.stop()).toMatchObject({ code: 0 });
    await expect(fetch(`${url}/metrics`)).rejects.toThrow();
  });

  it('warns when metrics.host is not a loopback address', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { metrics: { port: 0, host: '0.0.0.0' } } });
    const url = await metricsUrl(gw);
    const warning = await gw.waitForLog((l) => l.includes('"event":"metrics_public_bind"'));
    expect(warning).toContain('without a token');
    const port = new URL(url).port;
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    await gw.stop();
  });

  it('metrics.enabled false serves no /metrics at all', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { metrics: { enabled: false } } });
    const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${gw.credentials().operatorToken}` } });
    expect(res.status).toBe(404);
    expect(gw.logs().some((l) => l.includes('metrics_listening'))).toBe(false);
    await gw.stop();
  });
});
