import { describe, expect, it } from 'vitest';
import { httpAccount, slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

const env = useSlackEnv({ account: (slack) => httpAccount(slack, { queueMode: 'steer' }) });

describe('Slack with queueMode steer', () => {
  it('a message steered into the running turn gets no reply of its own; the running turn answers both', async () => {
    const { model, slack, gw } = env;
    const IM = slack.identity.imChannelId;
    const urls = slackUrls(gw);
    model.enqueue({ hold: true, toolUses: [{ name: 'list_files', input: {} }] }, { text: 'Answered both questions.' });
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'first question' }));
    try {
      await model.waitForHeld();
      // Answered only once it is in the inbox, so it is queued behind (and steered into) the held turn.
      expect((await slack.deliverEvent(urls.events, slack.events.im({ text: 'second question, while you work' }))).status).toBe(200);
    } finally {
      model.release();
    }
    await waitForMessage(slack, IM, 'Answered both questions.');
    const second = model.requests
      .at(-1)!
      .body.messages!.map((m) => JSON.stringify(m.content))
      .join(' ');
    expect(second).toContain('second question, while you work');
    // Later traffic in the same lane proves nothing else was queued for the steered message.
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'third' }));
    await waitForMessage(slack, IM, 'echo: third');
    expect(slack.messages(IM).map((m) => m.text)).toEqual(['Answered both questions.', 'echo: third']);
  });
});
