import { describe, expect, it } from 'vitest';
import { api, CANARY_SLACK_SIGNING_SECRET, signSlackRequest } from '@switchboard/testkit';
import { slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

const env = useSlackEnv({ config: { budgets: { timezone: 'Europe/Berlin', roles: { member: { month: { usd: 5 } } } } } });

/** Posts a signed `/switchboard <text>` slash command and answers its JSON reply. */
async function slash(text: string): Promise<{ response_type: string; text: string }> {
  const { slack, gw } = env;
  const cmd = slack.events.slashCommand({ command: '/switchboard', text, channel: slack.identity.imChannelId });
  const body = new URLSearchParams(Object.entries(cmd).map(([k, v]) => [k, String(v)])).toString();
  const ts = Math.floor(Date.now() / 1000);
  const res = await fetch(slackUrls(gw).interactive, {
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

describe('slack: /switchboard usage', () => {
  it("shows the person's spend today and this month (equal to the fake's reported usage) against their role's budget, with the reset in the budget time zone", async () => {
    const { slack, model, gw } = env;
    await slack.deliverEvent(slackUrls(gw).events, slack.events.im({ text: 'hello budget' }));
    await waitForMessage(slack, slack.identity.imChannelId, 'echo: hello budget');
    await gw.waitForLog((l) => l.includes('"turn finished"'), 20_000);
    let tokens = 0;
    for (const r of model.requests) {
      if (r.path !== '/v1/messages' || !r.usage) continue;
      tokens += r.usage.input_tokens + r.usage.output_tokens + r.usage.cache_read_input_tokens + r.usage.cache_creation_input_tokens;
    }
    expect(tokens).toBeGreaterThan(0);
    const report = await api(gw, 'GET', '/api/v1/usage?channel=slack:team', { token: gw.credentials().operatorToken });
    const t = report.json.totals;
    expect(t.inputTokens + t.outputTokens + t.cacheReadInputTokens + t.cacheCreationInputTokens).toBe(tokens);

    const reply = await slash('usage');
    expect(reply.response_type).toBe('ephemeral');
    const lines = reply.text.split('\n');
    expect(lines[0]).toBe('*Your usage*');
    expect(lines[1]).toMatch(
      new RegExp(
        `^Today: \\*${tokens.toLocaleString('en-US')} tokens\\*, \\$${t.costUsd.toFixed(4)} · no budget · resets \\d{4}-\\d{2}-\\d{2} 00:00 Europe/Berlin$`,
      ),
    );
    expect(lines[2]).toMatch(
      new RegExp(
        `^This month: \\*${tokens.toLocaleString('en-US')} tokens\\*, \\$${t.costUsd.toFixed(4)} · budget \\$5\\.00 \\(role \`member\`\\) · resets \\d{4}-\\d{2}-01 00:00 Europe/Berlin$`,
      ),
    );
    // The help names the command too.
    expect((await slash('nonsense')).text).toContain('/switchboard usage');
  });
});
