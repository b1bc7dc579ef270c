import { beforeAll, describe, expect, it } from 'vitest';
import { SUMMARY_PREFIX } from '@switchboard/agent';
import { isSummaryRequest, summaryHandler } from '@switchboard/testkit';
import { postSlashCommand, slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

// Issue 13, acceptance 8 for `/compact` on Slack: `/switchboard compact [instructions]` in the DM with the app.
const env = useSlackEnv();
let IM: string;

beforeAll(() => {
  IM = env.slack.identity.imChannelId;
  env.model.setHandler(summaryHandler({ text: 'SUMMARY: the person asked about three colours.' }));
});

/** A signed `/switchboard <text>` slash command over HTTP (see `postSlashCommand`). */
const slash = (text: string) => postSlashCommand(env, text, IM);

describe('slack: /switchboard compact', () => {
  it('says the conversation is too short at first, then compacts with the instructions; the next request starts from the summary', async () => {
    const { slack, model } = env;
    // Long enough that a summary is smaller than what it replaces (a short history is not compacted).
    const filler = ' Some detail about it, to be remembered later.'.repeat(20);
    for (const colour of ['red', 'green', 'blue']) {
      await slack.deliverEvent(slackUrls(env.gw).events, slack.events.im({ text: `tell me about ${colour}${filler}` }));
      await waitForMessage(slack, IM, `echo: tell me about ${colour}`);
      // One turn is nothing to summarize.
      if (colour === 'red')
        expect(await slash('compact')).toMatchObject({ response_type: 'ephemeral', text: 'Not compacted: the conversation is still short.' });
    }
    const before = model.requests.length;
    const answer = await slash('compact keep the colours');
    expect(answer.response_type).toBe('ephemeral');
    expect(answer.text).toMatch(/^Compacted the conversation: about \d+ → \d+ tokens\./);
    const calls = model.requests.slice(before);
    expect(calls.map(isSummaryRequest)).toEqual([true]);
    expect(JSON.stringify(calls[0]!.body.messages)).toContain('keep the colours');

    await slack.deliverEvent(slackUrls(env.gw).events, slack.events.im({ text: 'and yellow?' }));
    await waitForMessage(slack, IM, 'echo: and yellow?');
    const first = model.requests.at(-1)!.body.messages![0]!.content as Array<{ text?: string }>;
    expect(String(first[0]!.text).startsWith(`${SUMMARY_PREFIX}\n\nSUMMARY: the person asked`)).toBe(true);
    expect(JSON.stringify(model.requests.at(-1)!.body.messages)).not.toContain('tell me about red');
  });
});
