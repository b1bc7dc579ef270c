import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestConfig, runCli, startGateway, type GatewayProcess } from '@switchboard/testkit';
import { chat, connectClient, useFakeModel } from './helpers.js';
import { parseMetrics, sampleValue } from './metrics-helpers.js';

// Issue 18, acceptance 1 (the other door): with `metrics.port` the metrics have a port of their
// own, bound to loopback unless `metrics.host` says otherwise (with a warning), answering without
// a token — and the gateway's port no longer serves them. `metrics.enabled: false` serves none.
const env = useFakeModel();
let busy: Server | undefined;
afterAll(() => busy?.close());

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

  it('a metrics.port in use stops the start with exit 78 naming metrics.port; no credentials written', async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy!.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'swb-metrics-'));
    chmodSync(dir, 0o755);
    const dataDir = join(dir, 'data');
    const configPath = join(dir, 'switchboard.json5');
    writeFileSync(configPath, JSON.stringify(buildTestConfig(dataDir, env.fake.url, { metrics: { port } })), { mode: 0o644 });
    const r = await runCli(['start'], { configPath, timeoutMs: 20_000 });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`metrics.port: port ${port} on 127.0.0.1 is already in use`);
    expect(r.stderr).not.toContain('SWITCHBOARD_PORT');
    expect(r.stderr + r.stdout).not.toMatch(/\n\s+at |EADDRINUSE/);
    expect(existsSync(join(dataDir, 'credentials.json'))).toBe(false);
  });
});
