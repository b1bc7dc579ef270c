import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findInWorkspaces } from './helpers.js';
import { scriptRoles, subagentConfig } from './subagent-helpers.js';
import { buttonsOf, httpAccount, slackUrls, USER, useSlackEnv, waitForMessage } from './slack-helpers.js';

const env = useSlackEnv({ account: (slack) => httpAccount(slack, { allowFrom: [USER] }), config: subagentConfig() });

describe('Slack: a subagent’s approval reaches the parent’s chat', () => {
  it('the Block Kit approval names the subagent and its task; approving lets it write', async () => {
    const { model, slack, gw } = env;
    const urls = slackUrls(gw);
    const IM = slack.identity.imChannelId;
    scriptRoles(
      model,
      [
        { toolUses: [{ name: 'task', id: 'toolu_sl_task', input: { description: 'save the note', prompt: 'Save slack.txt.' } }] },
        { text: 'Saved by the subagent.' },
      ],
      {
        'Save slack.txt.': [{ toolUses: [{ name: 'write_file', id: 'toolu_sl_w', input: { path: 'slack.txt', content: 'from slack' } }] }, { text: 'Saved.' }],
      },
    );
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'save a note' }));
    const request = await slack.waitFor(() => slack.messages(IM).find((m) => buttonsOf(m).length === 3), 15_000, 'the approval buttons');
    expect(request.text).toContain('🤖 general: save the note');
    expect(request.text).toContain('write_file');
    const [approve] = buttonsOf(request);
    const ack = await slack.deliverInteraction(
      urls.interactive,
      slack.events.blockActions({ actionId: approve!.action_id, value: approve!.value, user: USER, channel: IM, messageTs: request.ts }),
    );
    expect(ack.status).toBe(200);
    await waitForMessage(slack, IM, 'Saved by the subagent.');
    model.setHandler(undefined);
    expect(readFileSync(findInWorkspaces(gw, 'slack.txt')!, 'utf8')).toBe('from slack');
  });
});
