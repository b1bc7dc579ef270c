import { describeNetworkCause, type DoctorCheck, type DoctorDeps } from '@switchboard/core';
import { CANARY_SLACK_APP_TOKEN, CANARY_SLACK_BOT_TOKEN, CANARY_SLACK_SIGNING_SECRET, closedPort, startFakeSlack, type FakeSlack } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slackAccountSchema } from '../src/account.js';
import { slackModule } from '../src/module.js';

/** Doctor deps as the gateway builds them: keys under `channels.slack.accounts`, `${VAR}` names and unset ones by key. */
function doctorDeps(opts: { vars?: Record<string, string[]>; unset?: string[] } = {}): DoctorDeps {
  const vars = new Map(Object.entries(opts.vars ?? {}));
  return {
    timeoutMs: 10_000,
    describeNetworkError: describeNetworkCause,
    configSource: (account, path) => {
      const key = ['channels', 'slack', 'accounts', account, ...path].join('.');
      return { key, variables: vars.get(key) ?? [], unset: (opts.unset ?? []).includes(key) };
    },
  };
}

/** Runs the module's doctor hook over raw account configs (parsed by the account schema, as the gateway does). */
async function check(raw: Record<string, Record<string, unknown>>, deps: DoctorDeps): Promise<DoctorCheck[]> {
  const accounts = Object.fromEntries(Object.entries(raw).map(([id, a]) => [id, slackAccountSchema.parse(a)]));
  const hook = slackModule.doctor;
  if (!hook) throw new Error('the Slack module has no doctor hook');
  const out: DoctorCheck[] = [];
  for await (const c of await hook.checkAccounts(accounts, deps)) out.push(c);
  return out;
}

describe('Slack doctor checks (auth.test / apps.connections.open against a loopback fake Web API)', () => {
  let slack: FakeSlack;
  const http = (botToken: string, apiUrl?: string) => ({ botToken, mode: 'http', signingSecret: CANARY_SLACK_SIGNING_SECRET, apiUrl: apiUrl ?? slack.apiUrl });
  const socket = (appToken: string) => ({ botToken: CANARY_SLACK_BOT_TOKEN, mode: 'socket', appToken, apiUrl: slack.apiUrl.replace(/\/+$/, '') });
  beforeAll(async () => {
    slack = await startFakeSlack();
  });
  afterAll(async () => {
    await slack.close();
  });

  it('an HTTP-mode account checks its bot token; a Socket Mode account also its app token; accepted ones name the bot and team', async () => {
    const before = slack.calls.length;
    const checks = await check({ team: http(CANARY_SLACK_BOT_TOKEN), sock: socket(CANARY_SLACK_APP_TOKEN) }, doctorDeps());
    expect(checks).toEqual([
      { ok: true, title: 'slack:team bot token accepted (auth.test): switchboard in Switchboard Test' },
      { ok: true, title: 'slack:sock bot token accepted (auth.test): switchboard in Switchboard Test' },
      { ok: true, title: 'slack:sock app token accepted (apps.connections.open)' },
    ]);
    expect(slack.calls.slice(before).map((c) => `${c.method} ${c.tokenKind}`)).toEqual(['auth.test bot', 'auth.test bot', 'apps.connections.open app']);
  });

  it('a refused token names the Slack error, the key and its variables', async () => {
    const checks = await check(
      { team: http('xoxb-wrong-slack-token-for-doctor'), sock: socket('xapp-wrong-app-token-for-doctor') },
      doctorDeps({ vars: { 'channels.slack.accounts.team.botToken': ['SLACK_BOT_TOKEN'] } }),
    );
    expect(checks).toEqual([
      {
        ok: false,
        title: 'slack:team bot token accepted (auth.test)',
        detail: 'Slack refused it (invalid_auth)',
        fix: "check channels.slack.accounts.team.botToken (from $SLACK_BOT_TOKEN): the app's Bot User OAuth Token (xoxb-…)",
      },
      { ok: true, title: 'slack:sock bot token accepted (auth.test): switchboard in Switchboard Test' },
      {
        ok: false,
        title: 'slack:sock app token accepted (apps.connections.open)',
        detail: 'Slack refused it (invalid_auth)',
        fix: 'check channels.slack.accounts.sock.appToken: an app-level token (xapp-…) with the connections:write scope',
      },
    ]);
  });

  it('a token whose variable is not set is skipped, without a request; the other token of the account is still checked', async () => {
    const before = slack.calls.length;
    const checks = await check(
      { team: http(CANARY_SLACK_BOT_TOKEN), sock: socket(CANARY_SLACK_APP_TOKEN) },
      doctorDeps({ unset: ['channels.slack.accounts.team.botToken', 'channels.slack.accounts.sock.appToken'] }),
    );
    expect(checks).toEqual([
      { ok: false, skipped: true, title: 'slack:team botToken not checked (its variable is not set)' },
      { ok: true, title: 'slack:sock bot token accepted (auth.test): switchboard in Switchboard Test' },
      { ok: false, skipped: true, title: 'slack:sock appToken not checked (its variable is not set)' },
    ]);
    expect(slack.calls.slice(before).map((c) => c.method)).toEqual(['auth.test']);
  });

  it('a non-JSON 5xx is a refusal with its status; an unreachable API names host, cause and the apiUrl key', async () => {
    slack.failNext('auth.test', { status: 503 });
    const port = await closedPort();
    const checks = await check({ team: http(CANARY_SLACK_BOT_TOKEN), down: http(CANARY_SLACK_BOT_TOKEN, `http://127.0.0.1:${port}/api/`) }, doctorDeps());
    expect(checks).toEqual([
      {
        ok: false,
        title: 'slack:team bot token accepted (auth.test)',
        detail: 'Slack refused it (HTTP 503)',
        fix: "check channels.slack.accounts.team.botToken: the app's Bot User OAuth Token (xoxb-…)",
      },
      {
        ok: false,
        title: 'slack:down bot token accepted (auth.test)',
        detail: `ECONNREFUSED 127.0.0.1:${port}`,
        fix: 'check channels.slack.accounts.down.apiUrl and that this host can reach it',
      },
    ]);
    expect(JSON.stringify(checks)).not.toContain(CANARY_SLACK_BOT_TOKEN);
  });
});
