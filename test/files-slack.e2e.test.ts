import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { findInWorkspaces, toolResultFor } from './helpers.js';
import { httpAccount, leakedCanaries, slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

// Acceptance 7 (issue 15): files in and out of a Slack conversation through the real gateway.
const env = useSlackEnv({
  account: (slack) => httpAccount(slack, { maxInboundMediaBytes: 64 * 1024 }),
  config: { tools: { sendFile: { enabled: true } } },
});
let IM: string;
let events: string;

beforeAll(() => {
  IM = env.slack.identity.imChannelId;
  events = slackUrls(env.gw).events;
});

const lastUserText = (): string => JSON.stringify(env.model.requests.at(-1)!.body.messages.at(-1));

describe('files through Slack', () => {
  it('a shared file (url_private_download with the bot token) lands in inbox/ and the model is told its path and type', async () => {
    const { slack, model } = env;
    model.enqueue({ text: 'Thanks for the notes.' });
    const file = slack.addUserFile({ name: 'notes.csv', mimetype: 'text/csv', content: 'a,b\n1,2\n' });
    const r = await slack.deliverEvent(events, { ...slack.events.im({ text: '' }), subtype: 'file_share', files: [file] });
    expect(r.status).toBe(200);
    await waitForMessage(slack, IM, 'Thanks for the notes.');
    const saved = findInWorkspaces(env.gw, 'inbox/notes.csv');
    expect(saved).toBeDefined();
    expect(readFileSync(saved!, 'utf8')).toBe('a,b\n1,2\n');
    expect(lastUserText()).toContain('inbox/notes.csv');
    expect(lastUserText()).toContain('text/csv');
    expect(leakedCanaries(env.gw)).toBe(0);
  });

  it('a shared file over maxInboundMediaBytes gets a reply naming the limit and its key; the model is not called', async () => {
    const { slack, model } = env;
    const before = model.requests.length;
    const file = { ...slack.addUserFile({ name: 'big.bin', content: 'x' }), size: 10 * 1024 * 1024 };
    await slack.deliverEvent(events, { ...slack.events.im({ text: 'have a big one' }), subtype: 'file_share', files: [file] });
    const refusal = await waitForMessage(slack, IM, 'too large');
    expect(refusal.text).toContain('channels.slack.accounts.team.maxInboundMediaBytes');
    expect(model.requests.length).toBe(before);
  });

  it('send_file shares a workspace file with the external upload flow; a path outside the workspace is refused', async () => {
    const { slack, model } = env;
    const workspace = dirname(dirname(findInWorkspaces(env.gw, 'inbox/notes.csv')!));
    writeFileSync(join(workspace, 'totals.csv'), 'total\n3\n');
    model.enqueue(
      {
        toolUses: [
          { name: 'send_file', input: { path: 'totals.csv', caption: 'the totals' }, id: 'toolu_slack_send' },
          { name: 'send_file', input: { path: '../../../../../etc/hostname' }, id: 'toolu_slack_escape' },
        ],
      },
      { text: 'Shared the totals.' },
    );
    await slack.deliverEvent(events, slack.events.im({ text: 'send me the totals' }));
    await waitForMessage(slack, IM, 'Shared the totals.');
    expect(slack.callsTo('files.getUploadURLExternal')).toHaveLength(1);
    expect(slack.callsTo('files.getUploadURLExternal')[0]!.params).toMatchObject({ filename: 'totals.csv', length: '8' });
    expect(slack.callsTo('files.completeUploadExternal')[0]!.ok).toBe(true);
    expect(slack.uploads).toHaveLength(1);
    expect(slack.uploads[0]).toMatchObject({ filename: 'totals.csv', channel: IM, initial_comment: 'the totals' });
    expect(slack.uploads[0]!.content.toString('utf8')).toBe('total\n3\n');
    expect(toolResultFor(model, 'toolu_slack_send').is_error).toBeFalsy();
    const refused = toolResultFor(model, 'toolu_slack_escape');
    expect(refused.is_error).toBe(true);
    expect(refused.content).toContain('refused');
    expect(leakedCanaries(env.gw)).toBe(0);
  });
});
