import { describe, expect, it } from 'vitest';
import { api, type GatewayProcess } from '@switchboard/testkit';
import { httpAccount, leakedCanaries, useSlackEnv, waitForMessage } from './slack-helpers.js';

/**
 * Issue 11, the Slack fault boundary: a failure in one conversation or one account is logged with
 * channel, account and conversation, counted in health(), and ends neither the process nor the
 * other account. Two HTTP-mode accounts (`team` and `other`) share one fake workspace.
 */
const env = useSlackEnv();

// `useSlackEnv` configures `team`; the second account is added by restarting with it.
let gw: GatewayProcess;
const urlsOf = (account: string) => ({ events: `${gw.url}/channels/slack/${account}/events`, interactive: `${gw.url}/channels/slack/${account}/interactive` });

async function health(account: string): Promise<{ state: string; detail?: string }> {
  const r = await api(gw, 'GET', '/readyz', { token: gw.credentials().operatorToken });
  return r.json.channels[`slack:${account}`];
}

describe('Slack fault boundary', () => {
  it('a malformed button payload on one account is refused; the process and the other account keep answering', async () => {
    gw = env.gw = await env.gw.restart({ config: { channels: { slack: { accounts: { other: httpAccount(env.slack) } } } } });
    const { slack } = env;
    const IM = slack.identity.imChannelId;
    // `actions` is not a list: the old handler called .map on it after the 200, outside any catch.
    const bad = { type: 'block_actions', user: { id: 'U0USER0001', team_id: slack.identity.teamId }, container: { channel_id: IM }, actions: 'approve' };
    const r = await slack.deliverInteraction(urlsOf('team').interactive, bad);
    expect(r.status).toBe(200);
    await gw.waitForLog(/slack interaction dropped: malformed payload/);
    await slack.deliverEvent(urlsOf('other').events, slack.events.im({ text: 'other account still here' }));
    await waitForMessage(slack, IM, 'echo: other account still here');
    await slack.deliverEvent(urlsOf('team').events, slack.events.im({ text: 'team account still here' }));
    await waitForMessage(slack, IM, 'echo: team account still here');
    expect(gw.child.exitCode).toBeNull();
  });

  it('a reply that Slack refuses is logged with account and conversation and counted in health; the other account is untouched', async () => {
    const { slack } = env;
    const IM = slack.identity.imChannelId;
    slack.failNext('chat.postMessage', { error: 'restricted_action' });
    await slack.deliverEvent(urlsOf('team').events, slack.events.im({ text: 'this reply is refused' }));
    const line = JSON.parse(await gw.waitForLog(/"channel_task_failed"/, 15_000)) as Record<string, unknown>;
    expect(line).toMatchObject({ channel: 'slack:team', account: 'team', conversation: IM, code: 'restricted_action' });
    expect(String(line.task)).toMatch(/^render /);
    const h = await health('team');
    expect(h.state).toBe('up');
    expect(h.detail).toMatch(new RegExp(`task failure.*in ${IM}: restricted_action`));
    expect((await health('other')).detail ?? '').not.toMatch(/task failure/);
    await slack.deliverEvent(urlsOf('other').events, slack.events.im({ text: 'unaffected' }));
    await waitForMessage(slack, IM, 'echo: unaffected');
    expect(gw.child.exitCode).toBeNull();
    expect(leakedCanaries(gw)).toBe(0);
  });
});
