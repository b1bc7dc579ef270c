import { afterAll, beforeAll, expect } from 'vitest';
import {
  ALL_CANARIES,
  api,
  CANARY_SLACK_APP_TOKEN,
  CANARY_SLACK_BOT_TOKEN,
  CANARY_SLACK_SIGNING_SECRET,
  signSlackRequest,
  startFakeAnthropic,
  startFakeSlack,
  startGateway,
  stopAllGateways,
  type FakeAnthropic,
  type FakeSlack,
  type FakeSlackOptions,
  type GatewayProcess,
  type SlackStoredMessage,
} from '@switchboard/testkit';

/** The account id the Slack e2e tests configure. */
export const ACCOUNT = 'team';
/** The fake's default human user, allowlisted in these tests. */
export const USER = 'U0USER0001';

/** An HTTP-mode (Events API) Slack account against the fake, with the canary secrets planted. */
export function httpAccount(fake: FakeSlack, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    botToken: CANARY_SLACK_BOT_TOKEN,
    mode: 'http',
    signingSecret: CANARY_SLACK_SIGNING_SECRET,
    apiUrl: fake.apiUrl,
    dmPolicy: 'allowlist',
    allowFrom: [USER],
    groups: { [fake.identity.channelId]: { requireMention: true } },
    maxRetries: 2,
    // These tests send many messages as one person; the gate's rate limit has its own tests.
    rateLimit: { burst: 100, perMinute: 600 },
    ...extra,
  };
}

/** A Socket Mode Slack account against the fake. */
export function socketAccount(fake: FakeSlack, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { signingSecret: _unused, ...rest } = httpAccount(fake);
  return { ...rest, mode: 'socket', appToken: CANARY_SLACK_APP_TOKEN, ...extra };
}

/** The gateway config that adds one Slack account. */
export function slackConfig(account: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { channels: { slack: { accounts: { [ACCOUNT]: account } } }, ...extra };
}

/** A fake model, a fake Slack and a gateway whose `slack:team` account points at it. */
export interface SlackEnv {
  model: FakeAnthropic;
  slack: FakeSlack;
  gw: GatewayProcess;
}

/**
 * Registers `beforeAll` (start a fake model and a fake Slack with `fakeSlack` options, then a
 * gateway with `slackConfig(account(slack), config)`; the account defaults to `httpAccount(slack)`)
 * and `afterAll` (stop every gateway, close the fakes) in the calling file or `describe`. The
 * returned object is filled in by `beforeAll`, so read it inside tests and hooks; after a restart
 * assign the new gateway to `env.gw`.
 */
export function useSlackEnv(
  opts: { account?: (slack: FakeSlack) => Record<string, unknown>; config?: Record<string, unknown>; fakeSlack?: FakeSlackOptions } = {},
): SlackEnv {
  const env = {} as SlackEnv;
  const account = opts.account ?? ((slack: FakeSlack) => httpAccount(slack));
  beforeAll(async () => {
    env.model = await startFakeAnthropic();
    env.slack = await startFakeSlack(opts.fakeSlack);
    env.gw = await startGateway({ modelUrl: env.model.url, config: slackConfig(account(env.slack), opts.config) });
  });
  afterAll(async () => {
    await stopAllGateways();
    await env.slack?.close();
    await env.model?.close();
  });
  return env;
}

/** The Events API and interactivity URLs of the test account. */
export function slackUrls(gw: GatewayProcess): { events: string; interactive: string } {
  return { events: `${gw.url}/channels/slack/${ACCOUNT}/events`, interactive: `${gw.url}/channels/slack/${ACCOUNT}/interactive` };
}

/**
 * Posts a signed `/switchboard <text>` slash command over HTTP to the test account's
 * interactivity URL, as Slack would from `channel` (default: the fake's DM with the bot); expects
 * a 200 and returns its JSON answer.
 */
export async function postSlashCommand(
  env: SlackEnv,
  text: string,
  channel = env.slack.identity.imChannelId,
): Promise<{ response_type: string; text: string }> {
  const cmd = env.slack.events.slashCommand({ command: '/switchboard', text, channel });
  const body = new URLSearchParams(Object.entries(cmd).map(([k, v]) => [k, String(v)])).toString();
  const ts = Math.floor(Date.now() / 1000);
  const res = await fetch(slackUrls(env.gw).interactive, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': String(ts),
      'x-slack-signature': signSlackRequest(CANARY_SLACK_SIGNING_SECRET, ts, body),
    },
    body,
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { response_type: string; text: string };
}

/** The Slack account's health as /readyz reports it (details need a read token). */
export async function slackHealth(gw: GatewayProcess): Promise<{ state: string; detail?: string }> {
  const r = await api(gw, 'GET', '/readyz', { token: gw.credentials().operatorToken });
  return r.json.channels[`slack:${ACCOUNT}`];
}

/** Bot messages (deleted ones included) whose text or history contains `needle`. */
export function messagesWith(fake: FakeSlack, needle: string): SlackStoredMessage[] {
  return fake.messages(undefined, { includeDeleted: true }).filter((m) => m.history.some((h) => h.includes(needle)));
}

/** Waits for a bot message in `channel` whose current text contains `needle`. */
export function waitForMessage(fake: FakeSlack, channel: string, needle: string, timeoutMs = 15_000): Promise<SlackStoredMessage> {
  return fake.waitFor(() => fake.messages(channel).find((m) => m.text.includes(needle)), timeoutMs, `a message containing ${JSON.stringify(needle)}`);
}

/** Every log line of the gateway, checked for planted secrets. */
export function leakedCanaries(gw: GatewayProcess): number {
  const all = gw.logs().join('\n');
  return ALL_CANARIES.filter((c) => all.includes(c)).length;
}

/** A Block Kit button as the fake Slack stored it. */
export type SlackButton = { action_id: string; value: string };

/** The buttons of a posted message's `actions` blocks (none once an approval card is decided). */
export function buttonsOf(m: SlackStoredMessage): SlackButton[] {
  return ((m.blocks as Array<{ type: string; elements?: SlackButton[] }> | undefined) ?? [])
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements ?? []);
}
