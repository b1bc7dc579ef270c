import { describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { postSlashCommand, slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

const env = useSlackEnv({ config: { budgets: { timezone: 'Europe/Berlin', roles: { member: { month: { usd: 5 } } } } } });

/** A signed `/switchboard <text>` slash command over HTTP (see `postSlashCommand`). */
const slash = (text: string) => postSlashCommand(env, text);

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
