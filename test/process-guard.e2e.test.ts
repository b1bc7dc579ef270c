import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { api, startGateway } from '@switchboard/testkit';
import { useFakeModel } from './helpers.js';

const env = useFakeModel();
const preload = fileURLToPath(new URL('./fixtures/escape-boundary.mjs', import.meta.url));

describe('process guard: errors that escaped every fault boundary', () => {
  it('an unhandled rejection is logged with context and the gateway keeps running', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, env: { NODE_OPTIONS: `--import ${preload}`, SWB_TEST_ESCAPE: 'reject' } });
    gw.child.kill('SIGUSR2');
    const line = JSON.parse(await gw.waitForLog(/"event":"unhandled_rejection"/)) as Record<string, unknown>;
    expect(line).toMatchObject({ error: 'escaped: a rejection no boundary caught', count: 1 });
    expect(String(line.stack)).toContain('escape-boundary.mjs');
    expect((await api(gw, 'GET', '/healthz')).status).toBe(200);
    expect((await gw.stop()).code).toBe(0);
  });

  it('an uncaught exception shuts the gateway down gracefully (drain, suspend, close) and exits 70', async () => {
    const gw = await startGateway({
      modelUrl: env.fake.url,
      env: { NODE_OPTIONS: `--import ${preload}`, SWB_TEST_ESCAPE: 'throw' },
      config: { limits: { shutdownGrace: '2s' } },
    });
    gw.child.kill('SIGUSR2');
    const info = await gw.exited;
    expect(info).toMatchObject({ code: 70, signal: null });
    const events = gw
      .logs()
      .filter((l) => l.startsWith('{'))
      .map((l) => (JSON.parse(l) as { event?: string }).event)
      .filter((e) => e === 'uncaught_exception' || e === 'shutdown' || e === 'stopped');
    expect(events).toEqual(['uncaught_exception', 'shutdown', 'stopped']);
  });
});
