import { describe, expect, it } from 'vitest';
import { leakedCanaries, messagesWith, slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

const env = useSlackEnv();

/** An answer of three to four Slack messages: twelve ~800-character chapters. */
const STORY = Array.from({ length: 12 }, (_, i) => `Chapter ${i + 1}. ${'Once upon a time there was a gateway. '.repeat(21)}`).join('\n\n');

describe('Slack replies across a crash', () => {
  it('SIGKILL mid-stream, restart: the recorded draft becomes the answer, which arrives once, no chunk posted twice', async () => {
    const { model, slack } = env;
    const IM = slack.identity.imChannelId;
    model.enqueue({ text: STORY, holdAfterEvents: 5 });
    const event = slack.events.im({ text: 'tell me a long story' });
    expect((await slack.deliverEvent(slackUrls(env.gw).events, event)).status).toBe(200);
    await model.waitForHeld();
    const draft = await slack.waitFor(() => slack.messages(IM).find((m) => m.text.startsWith('Chapter 1.')), 10_000, 'the draft');
    // Killed once the draft is in the ledger (a kill between the post and the ledger write leaves an orphan draft).
    await env.gw.waitForLog('slack draft recorded');
    const postsBefore = slack.callsTo('chat.postMessage').length;

    await env.gw.kill('SIGKILL');
    model.release();
    model.enqueue({ text: STORY });
    env.gw = await env.gw.restart();

    await waitForMessage(slack, IM, 'Chapter 12.', 20_000);
    const parts = slack.messages(IM, { includeDeleted: true }).filter((m) => m.history.some((h) => h.includes('Chapter ')));
    // The draft was edited into the first part: no second draft, nothing deleted, every chapter exactly once.
    expect(parts.every((p) => !p.deleted)).toBe(true);
    expect(parts[0]!.ts).toBe(draft.ts);
    expect(parts[0]!.text.startsWith('Chapter 1.')).toBe(true);
    for (let i = 1; i <= 12; i++) expect(parts.filter((p) => p.text.includes(`Chapter ${i}.`))).toHaveLength(1);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    expect(slack.callsTo('chat.postMessage').length - postsBefore).toBe(parts.length - 1);

    // Slack redelivering the event after the restart makes no second turn and no second reply.
    const calls = model.requests.length;
    const again = await slack.deliverEvent(slackUrls(env.gw).events, event, { retryNum: 1, retryReason: 'http_timeout' });
    expect(again.status).toBe(200);
    await slack.deliverEvent(slackUrls(env.gw).events, slack.events.im({ text: 'and after that?' }));
    await waitForMessage(slack, IM, 'echo: and after that?');
    expect(model.requests.length).toBe(calls + 1);
    expect(messagesWith(slack, 'Chapter 12.')).toHaveLength(1);
    expect(leakedCanaries(env.gw)).toBe(0);
  });
});
