import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CANARY_SLACK_APP_TOKEN,
  CANARY_TELEGRAM_TOKEN,
  CANARY_SLACK_BOT_TOKEN,
  CANARY_SLACK_SIGNING_SECRET,
  closedPort,
  startBlackhole,
  startFakeAnthropic,
  startFakeSlack,
  startGateway,
  stopAllGateways,
  type Blackhole,
  type FakeAnthropic,
  type FakeSlack,
  type GatewayProcess,
} from '@switchboard/testkit';
import { ACCOUNT, leakedCanaries, slackConfig, slackHealth, socketAccount } from './slack-helpers.js';

/**
 * Issue 11, acceptance 3 (Slack half): Slack's API root at a closed port and at a port that
 * accepts and never answers. The gateway listens at once, the account reports `starting`, every
 * network failure is logged once per backoff step with host and cause, and SIGTERM ends within
 * the grace with exit 0. A token Slack refuses takes the account `down` without fast retries,
 * naming the config key and the variable behind it.
 */

let model: FakeAnthropic;
let hole: Blackhole;

beforeAll(async () => {
  model = await startFakeAnthropic();
  hole = await startBlackhole();
});

afterAll(async () => {
  await stopAllGateways();
  await hole?.close();
  await model?.close();
});

type LogLine = Record<string, unknown> & { msg?: string };
const parsed = (gw: GatewayProcess): LogLine[] =>
  gw.logs().flatMap((l) => {
    try {
      return [JSON.parse(l) as LogLine];
    } catch {
      return [];
    }
  });

/** An account whose Web API root is `apiUrl`, with short timeouts so backoff steps come quickly. */
function unreachableAccount(mode: 'http' | 'socket', apiUrl: string): Record<string, unknown> {
  return {
    botToken: CANARY_SLACK_BOT_TOKEN,
    mode,
    ...(mode === 'http' ? { signingSecret: CANARY_SLACK_SIGNING_SECRET } : { appToken: CANARY_SLACK_APP_TOKEN }),
    apiUrl,
    dmPolicy: 'open',
    allowFrom: ['*'],
    maxRetries: 1,
    apiTimeout: '500ms',
    reconnectBackoffMax: '2s',
  };
}

/** Waits for two backoff steps logged with `cause`, then checks every failure line names host and cause once per step. */
async function expectStepLogs(gw: GatewayProcess, host: string, cause: RegExp): Promise<void> {
  const steps = (): LogLine[] => parsed(gw).filter((l) => l.msg === 'slack unreachable' && l.host === host);
  await gw.waitForLog((line) => line.includes('"slack unreachable"') && steps().length >= 2, 20_000);
  const lines = steps();
  for (const l of lines) {
    expect(l).toMatchObject({ channel: `slack:${ACCOUNT}`, host });
    expect(String(l.cause)).toMatch(cause);
    expect(typeof l.retryInMs).toBe('number');
  }
  // One line per backoff step of each caller: no step logged twice.
  const keys = lines.map((l) => `${String(l.call)}#${String(l.attempt)}`);
  expect(new Set(keys).size).toBe(keys.length);
  // The SDK's own per-request line (no host, no cause) is not at warn any more.
  expect(gw.logs().filter((l) => l.includes('http request failed') && l.includes('"level":40'))).toEqual([]);
}

/** SIGTERM, then the exit code and the `stopped` line. */
async function expectCleanStop(gw: GatewayProcess): Promise<void> {
  gw.child.kill('SIGTERM');
  const exit = await gw.exited;
  expect(exit.code).toBe(0);
  expect(gw.logs().some((l) => l.includes('"event":"stopped"'))).toBe(true);
}

describe('Slack API unreachable', () => {
  it('closed port: /healthz answers while the account is starting; ECONNREFUSED logged per backoff step; SIGTERM exits 0', async () => {
    const port = await closedPort();
    const gw = await startGateway({
      modelUrl: model.url,
      config: slackConfig(unreachableAccount('http', `http://127.0.0.1:${port}/api/`), { limits: { shutdownGrace: '2s' } }),
    });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const h = await slackHealth(gw);
    expect(h.state).toBe('starting');
    await expectStepLogs(gw, `127.0.0.1:${port}`, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
    expect((await slackHealth(gw)).detail).toMatch(new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
    await expectCleanStop(gw);
    expect(leakedCanaries(gw)).toBe(0);
  });

  it('a port that accepts and never answers (Socket Mode): starting, timeouts logged per step, SIGTERM with calls in flight exits 0', async () => {
    const host = `127.0.0.1:${hole.port}`;
    const gw = await startGateway({
      modelUrl: model.url,
      config: slackConfig(unreachableAccount('socket', `http://${host}/api/`), { limits: { shutdownGrace: '2s' } }),
    });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect((await slackHealth(gw)).state).toBe('starting');
    await expectStepLogs(gw, host, /timed out after 500 ms/);
    expect(hole.accepted).toBeGreaterThan(0);
    await expectCleanStop(gw);
    expect(leakedCanaries(gw)).toBe(0);
  });
});

describe('Slack refuses the token', () => {
  let slack: FakeSlack;
  beforeAll(async () => {
    // The fake answers invalid_auth for any bot token it does not know.
    slack = await startFakeSlack();
  });
  afterAll(async () => slack?.close());

  it('invalid_auth: the account is down naming the config key and its variable (never the value), and auth.test is not retried fast', async () => {
    const value = 'xoxb-revoked-token-0000000000';
    const gw = await startGateway({
      modelUrl: model.url,
      env: { SB_TEST_SLACK_BOT: value },
      config: slackConfig({ ...socketAccount(slack), botToken: '${SB_TEST_SLACK_BOT}', reconnectBackoffMax: '1s' }, { limits: { shutdownGrace: '2s' } }),
    });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    await gw.waitForLog(/"slack account down"/, 15_000);
    const h = await slackHealth(gw);
    expect(h.state).toBe('down');
    expect(h.detail).toContain('invalid_auth');
    expect(h.detail).toContain(`channels.slack.accounts.${ACCOUNT}.botToken`);
    expect(h.detail).toContain('SB_TEST_SLACK_BOT');
    expect(h.detail).not.toContain(value);
    // Permanent: one auth.test and no socket attempts with a token Slack refused.
    expect(slack.calls.filter((c) => c.method === 'auth.test')).toHaveLength(1);
    expect(slack.calls.filter((c) => c.method === 'apps.connections.open')).toHaveLength(0);
    const down = parsed(gw).filter((l) => l.msg === 'slack account down');
    expect(down).toHaveLength(1);
    expect(down[0]).toMatchObject({ channel: `slack:${ACCOUNT}`, key: `channels.slack.accounts.${ACCOUNT}.botToken`, variable: 'SB_TEST_SLACK_BOT' });
    expect(gw.logs().join('\n')).not.toContain(value);
    await expectCleanStop(gw);
  });

  it('HTTP 401 from the Web API is permanent too (no retries)', async () => {
    slack.failNext('auth.test', { status: 401 });
    const before = slack.calls.filter((c) => c.method === 'auth.test').length;
    const gw = await startGateway({
      modelUrl: model.url,
      config: slackConfig({ ...socketAccount(slack), maxRetries: 3 }, { limits: { shutdownGrace: '2s' } }),
    });
    await gw.waitForLog(/"slack account down"/, 15_000);
    const h = await slackHealth(gw);
    expect(h).toMatchObject({ state: 'down' });
    expect(h.detail).toContain('http_401');
    expect(h.detail).toContain(`channels.slack.accounts.${ACCOUNT}.botToken`);
    expect(slack.calls.filter((c) => c.method === 'auth.test').length - before).toBe(1);
    await expectCleanStop(gw);
  });
});

describe('every platform unreachable', () => {
  // Issue 11's whole-gateway check: Slack (both modes) and Telegram, each at a closed port and at
  // a port that accepts and never answers, in one process.
  it('Slack and Telegram at a closed port and at a port that never answers, in one gateway: /healthz answers, SIGTERM exits 0 with the stopped line', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const silent = `http://127.0.0.1:${hole.port}`;
    const telegram = (apiRoot: string) => ({ token: CANARY_TELEGRAM_TOKEN, apiRoot, dmPolicy: 'pairing', apiTimeout: '1s' });
    const gw = await startGateway({
      modelUrl: model.url,
      config: {
        limits: { shutdownGrace: '2s' },
        channels: {
          slack: {
            accounts: {
              closed: unreachableAccount('http', `${dead}/api/`),
              silent: unreachableAccount('socket', `${silent}/api/`),
              closedsocket: unreachableAccount('socket', `${dead}/api/`),
            },
          },
          telegram: { accounts: { tgclosed: telegram(dead), tgsilent: telegram(silent) } },
        },
      },
    });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    await gw.waitForLog((l) => l.includes('"slack unreachable"') && l.includes(`127.0.0.1:${hole.port}`), 15_000);
    await gw.waitForLog((l) => l.includes('telegram:tgsilent') && l.includes('timeout'), 15_000);
    await expectCleanStop(gw);
    expect(leakedCanaries(gw)).toBe(0);
  });
});
