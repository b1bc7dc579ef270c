import { beforeAll, describe, expect, it } from 'vitest';
import type { FakeAnthropic, FakeSlack, GatewayProcess, SlackCall } from '@switchboard/testkit';
import { postedCanaries } from './slack-leaks.js';
import { leakedCanaries, messagesWith, slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

const env = useSlackEnv();
let model: FakeAnthropic;
let slack: FakeSlack;
let gw: GatewayProcess;
let IM: string;

beforeAll(() => {
  ({ model, slack, gw } = env);
  IM = slack.identity.imChannelId;
});

/** The 429 answered to `chat.update` at or after call `fromSeq`, once the gateway has made it. */
const limitedUpdate = (fromSeq: number) =>
  slack.waitFor(() => slack.callsTo('chat.update').find((c) => c.seq > fromSeq && c.status === 429), 10_000, 'a rate-limited chat.update');

/** Asserts that no `chat.update` followed the 429 before its Retry-After was over, and that one did after it. */
function expectRetryAfterHonoured(limited: SlackCall, retryAfterSec: number): void {
  const later = slack.callsTo('chat.update').filter((c) => c.seq > limited.seq);
  expect(later.length).toBeGreaterThanOrEqual(1);
  for (const c of later) expect(c.receivedAt - limited.receivedAt).toBeGreaterThanOrEqual(retryAfterSec * 1000);
  expect(later.at(-1)!.ok).toBe(true);
}

describe('Slack rate limits on chat.update', () => {
  it('a 429 on the update that turns the draft into the answer: retried after Retry-After, the answer completes once', async () => {
    const answer = 'The quick brown fox jumps over the lazy dog, rate limits notwithstanding.';
    model.enqueue({ text: answer, holdAfterEvents: 4 });
    const seq = slack.calls.length;
    await slack.deliverEvent(slackUrls(gw).events, slack.events.im({ text: 'tell me about the fox' }));
    try {
      await model.waitForHeld();
      // The first third of the answer is out: the draft is posted, the rest comes after the release.
      await slack.waitFor(
        () => slack.messages(IM).find((m) => m.history[0] !== undefined && answer.startsWith(m.history[0]) && m.edits === 0),
        10_000,
        'the draft',
      );
      await gw.waitForLog('slack draft recorded');
      slack.failNext('chat.update', { status: 429, retryAfter: 1 });
    } finally {
      model.release();
    }
    const limited = await limitedUpdate(seq);
    const final = await slack.waitFor(() => slack.messages(IM).find((m) => m.text === answer), 10_000, 'the final answer');
    expectRetryAfterHonoured(limited, 1);
    // The draft became the answer: one message, posted once.
    expect(messagesWith(slack, 'The quick brown fox')).toHaveLength(1);
    expect(final.history.at(-1)).toBe(answer);
  });

  it('a 429 on a streamed draft edit holds every later update, the final one included, until Retry-After is over', async () => {
    const seq = slack.calls.length;
    slack.failNext('chat.update', { status: 429, retryAfter: 2 });
    model.enqueue(
      { text: 'Let me check the files.', toolUses: [{ name: 'list_files', input: {} }] },
      { text: 'Checked: there is nothing to list yet.', holdAfterEvents: 4 },
    );
    await slack.deliverEvent(slackUrls(gw).events, slack.events.im({ text: 'check my files' }));
    let limited: SlackCall;
    try {
      await model.waitForHeld();
      // The model is held mid-answer, so this 429 is a draft edit's.
      limited = await limitedUpdate(seq);
    } finally {
      model.release();
    }
    const final = await waitForMessage(slack, IM, 'nothing to list yet.');
    expectRetryAfterHonoured(limited, 2);
    expect(final.text).toBe('Let me check the files.\n\nChecked: there is nothing to list yet.');
    expect(messagesWith(slack, 'Let me check the files.')).toHaveLength(1);
    expect(slack.messages(IM, { includeDeleted: true }).filter((m) => m.deleted)).toHaveLength(0);
  });

  it('never puts the bot token or the signing secret in a message, and never logs them', () => {
    expect(slack.messages().length).toBeGreaterThanOrEqual(2);
    expect(postedCanaries(slack)).toBe(0);
    expect(leakedCanaries(gw)).toBe(0);
  });
});
