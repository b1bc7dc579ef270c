import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  closedPort,
  startBlackhole,
  startFakeAnthropic,
  startFakeTelegram,
  startGateway,
  stopAllGateways,
  type FakeAnthropic,
  type GatewayProcess,
} from '@switchboard/testkit';
import { TOKEN } from './telegram-helpers.js';

// Acceptance 3 of issue 11 (Telegram half): the Bot API unreachable, hanging, or refusing the token.
let model: FakeAnthropic;
beforeAll(async () => {
  model = await startFakeAnthropic();
});
afterAll(async () => {
  await stopAllGateways();
  await model?.close();
});

const RETRY = { maxRetryAttempts: 1, retryBaseDelay: '200ms', retryMaxDelay: '400ms' };

function gatewayAt(apiRoot: string, account: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<GatewayProcess> {
  return startGateway({
    modelUrl: model.url,
    env,
    config: {
      limits: { shutdownGrace: '2s' },
      channels: { telegram: { accounts: { main: { token: TOKEN, apiRoot, dmPolicy: 'pairing', ...RETRY, ...account } } } },
    },
  });
}

/** Log lines of Bot API failures (one per backoff step), parsed. */
const failureLines = (gw: GatewayProcess) =>
  gw
    .logs()
    .filter((l) => /"event":"telegram_(api_retry|init_failed|poll_failed)"/.test(l))
    .map((l) => JSON.parse(l) as { host: string; cause: string; retryInMs: number; msg: string });

async function waitForFailures(gw: GatewayProcess, n: number): Promise<void> {
  await gw.waitForLog(() => failureLines(gw).length >= n, 30_000);
}

async function telegramHealth(gw: GatewayProcess): Promise<{ state: string; detail: string }> {
  return (await api(gw, 'GET', '/readyz', { token: gw.credentials().operatorToken })).json.channels['telegram:main'];
}

async function expectCleanStop(gw: GatewayProcess): Promise<void> {
  const info = await gw.stop(20_000);
  expect(info).toMatchObject({ code: 0, signal: null });
  expect(gw.logs().some((l) => l.includes('"event":"stopped"'))).toBe(true);
}

describe('telegram: Bot API unreachable', () => {
  it('closed port: /healthz answers while the channel is starting; every backoff step logs host and cause once; SIGTERM exits 0', async () => {
    const port = await closedPort();
    const gw = await gatewayAt(`http://127.0.0.1:${port}`);
    expect((await api(gw, 'GET', '/healthz')).status).toBe(200);
    await waitForFailures(gw, 4);
    const lines = failureLines(gw);
    for (const l of lines) {
      expect(l.host).toBe(`127.0.0.1:${port}`);
      expect(l.cause).toBe('ECONNREFUSED');
      expect(l.msg).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
      expect(l.retryInMs).toBeLessThanOrEqual(400);
    }
    const h = await telegramHealth(gw);
    expect(h.state).toBe('down');
    expect(h.detail).toMatch(/^starting: polling not started: ECONNREFUSED 127\.0\.0\.1/);
    expect((await api(gw, 'GET', '/healthz')).status).toBe(200);
    expect(gw.logs().join('\n')).not.toContain(TOKEN);
    await expectCleanStop(gw);
  });

  it('a port that accepts and never answers: calls time out (apiTimeout), logged as timeouts; SIGTERM exits 0 with calls open', async () => {
    const hole = await startBlackhole();
    const port = hole.port;
    try {
      const gw = await gatewayAt(`http://127.0.0.1:${port}`, { apiTimeout: '1s' });
      expect((await api(gw, 'GET', '/healthz')).status).toBe(200);
      await waitForFailures(gw, 2);
      for (const l of failureLines(gw)) {
        expect(l.host).toBe(`127.0.0.1:${port}`);
        expect(l.cause).toBe('timeout');
      }
      expect((await telegramHealth(gw)).detail).toMatch(/^starting: /);
      await expectCleanStop(gw);
    } finally {
      await hole.close();
    }
  });

  it('a token the Bot API refuses (401): down, naming the account, the config key and the variable, never the value; not retried at once', async () => {
    const tg = await startFakeTelegram();
    try {
      const refused = '7654321:REFUSEDtokenREFUSEDtokenREFUSED00';
      const gw = await gatewayAt(tg.apiRoot, { token: '${SWB_TEST_REFUSED_TOKEN}' }, { SWB_TEST_REFUSED_TOKEN: refused });
      await gw.waitForLog(/"event":"telegram_token_refused"/, 20_000);
      const h = await telegramHealth(gw);
      expect(h.state).toBe('down');
      expect(h.detail).toContain('telegram account "main"');
      expect(h.detail).toContain('401');
      expect(h.detail).toContain('channels.telegram.accounts.main.token');
      expect(h.detail).toContain('SWB_TEST_REFUSED_TOKEN');
      expect(h.detail).not.toContain(refused);
      expect(tg.calls.filter((c) => c.method === 'getMe')).toHaveLength(1);
      expect(gw.logs().join('\n')).not.toContain(refused);
      await expectCleanStop(gw);
    } finally {
      await tg.close();
    }
  });
});
