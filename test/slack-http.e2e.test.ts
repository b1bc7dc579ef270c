import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { leakedCanaries, messagesWith, postSlashCommand, slackHealth, slackUrls, useSlackEnv, waitForMessage } from './slack-helpers.js';

const env = useSlackEnv();
let urls: { events: string; interactive: string };
let IM: string;
let CHAN: string;

beforeAll(() => {
  IM = env.slack.identity.imChannelId;
  CHAN = env.slack.identity.channelId;
  urls = slackUrls(env.gw);
});

/** Model requests whose last user message contains `text`. */
const modelCallsFor = (text: string) =>
  env.model.requests.filter((r) => {
    const last = r.body.messages?.at(-1);
    const content = typeof last?.content === 'string' ? last.content : (last?.content ?? []).map((b) => String(b.text ?? '')).join(' ');
    return last?.role === 'user' && content.includes(text);
  }).length;

describe('Slack Events API: request verification', () => {
  it('answers url_verification with the challenge and reports the account up', async () => {
    const { slack, gw } = env;
    const r = await slack.deliverUrlVerification(urls.events);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toEqual({ challenge: r.challenge });
    expect(await slackHealth(gw)).toMatchObject({ state: 'up' });
    const list = await api(gw, 'GET', '/api/v1/channels', { token: gw.credentials().operatorToken });
    expect(list.json.channels.find((c: { id: string }) => c.id === 'slack:team')).toMatchObject({ type: 'slack', health: { state: 'up' } });
  });

  it.each([
    ['a wrong signing secret', { signingSecret: '0'.repeat(32) }],
    ['a malformed signature', { signature: 'v0=not-hex' }],
    ['a timestamp 301 s old', { timestampSkewSec: -301 }],
    // Well past the 300 s window: one just past it ages into the window on a slow machine (a second
    // between signing and checking), which accepted it once under load.
    ['a timestamp 330 s in the future', { timestampSkewSec: 330 }],
    ['a body modified after signing', { tamper: true }],
    ['no signature header', { headers: { 'x-slack-signature': '' } }],
  ])('refuses %s with 401 and never reaches the model', async (_name, opts) => {
    const { model, slack } = env;
    const before = model.requests.length;
    const text = `forged ${Math.random()}`;
    const r = await slack.deliverEvent(urls.events, slack.events.im({ text }), opts);
    expect(r.status).toBe(401);
    expect(r.body).not.toContain(text);
    expect(modelCallsFor(text)).toBe(0);
    expect(model.requests.length).toBe(before);
  });

  it('refuses a forged button press and a forged url_verification', async () => {
    const { slack } = env;
    const press = await slack.deliverInteraction(urls.interactive, slack.events.blockActions({ actionId: 'swb_approval:allow:x' }), 'f'.repeat(32));
    expect(press.status).toBe(401);
    const verify = await slack.deliverUrlVerification(urls.events, 'e'.repeat(32));
    expect(verify.status).toBe(401);
  });
});

describe('Slack Events API: delivery', () => {
  it('acks within 3 s while the model stalls, and answers once it is released', async () => {
    const { model, slack } = env;
    model.enqueue({ hold: true, text: 'Sorry for the wait.' });
    try {
      const r = await slack.deliverEvent(urls.events, slack.events.im({ text: 'are you there?' }));
      expect(r.status).toBe(200);
      expect(r.elapsedMs).toBeLessThan(3000);
      await model.waitForHeld();
    } finally {
      model.release();
    }
    await waitForMessage(slack, IM, 'Sorry for the wait.');
  });

  it('a DM from an allowlisted user streams into a draft (throttled chat.update), then the final; unfurls off on every post', async () => {
    const { model, slack } = env;
    model.enqueue(
      { text: 'Let me look at your files.', toolUses: [{ name: 'list_files', input: {} }] },
      { text: 'There are no files yet, so **nothing** to list.', holdAfterEvents: 4 },
    );
    const sent = await slack.deliverEvent(urls.events, slack.events.im({ text: 'what files do I have?' }));
    expect(sent.status).toBe(200);
    try {
      await model.waitForHeld();
      // The second answer's first delta is out: one edit interval later the draft shows it.
      const draft = await slack.waitFor(() => slack.messages(IM).find((m) => m.edits >= 1 && m.text.includes('There are')), 10_000, 'an edited draft');
      expect(draft.history[0]).toBe('Let me look at your files.');
    } finally {
      model.release();
    }
    const final = await waitForMessage(slack, IM, 'to list.');
    expect(final.text).toContain('*nothing* to list.');
    expect(final.edits).toBeGreaterThanOrEqual(2);
    expect(final.thread_ts).toBeUndefined();
    expect(messagesWith(slack, 'Let me look at your files.')).toHaveLength(1);
    for (const c of slack.callsTo('chat.postMessage')) expect(c.params).toMatchObject({ unfurl_links: false, unfurl_media: false });
  });

  it('a Slack retry, a duplicate event and the app_mention + message pair each make exactly one model call', async () => {
    const { slack } = env;
    const ev = slack.events.im({ text: 'only once please' });
    const first = await slack.deliverEvent(urls.events, ev);
    const retry = await slack.deliverEvent(urls.events, ev, { eventId: first.eventId!, retryNum: 1, retryReason: 'http_timeout' });
    const dup = await slack.deliverEvent(urls.events, ev);
    expect([first.status, retry.status, dup.status]).toEqual([200, 200, 200]);
    const [mention, message] = slack.events.mentionPair({ text: 'mentioned once' });
    expect((await slack.deliverEvent(urls.events, mention)).status).toBe(200);
    expect((await slack.deliverEvent(urls.events, message)).status).toBe(200);
    await waitForMessage(slack, IM, 'echo: only once please');
    await waitForMessage(slack, CHAN, 'echo: mentioned once');
    // Later messages in the same lanes: a duplicate turn would have run before them.
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'after the duplicates' }));
    await slack.deliverEvent(urls.events, slack.events.appMention({ text: 'same thread', threadTs: mention.ts as string }));
    await waitForMessage(slack, IM, 'echo: after the duplicates');
    await waitForMessage(slack, CHAN, 'echo: same thread');
    expect(modelCallsFor('only once please')).toBe(1);
    expect(modelCallsFor('mentioned once')).toBe(1);
    expect(messagesWith(slack, 'echo: only once please')).toHaveLength(1);
    expect(messagesWith(slack, 'echo: mentioned once')).toHaveLength(1);
  });

  it('in a channel: no mention → ignored; a mention → answered in a thread of that message', async () => {
    const { slack } = env;
    const quiet = slack.events.channelMessage({ text: 'just chatting, not for the bot' });
    expect((await slack.deliverEvent(urls.events, quiet)).status).toBe(200);
    const mention = slack.events.appMention({ text: 'what is 2+2?' });
    await slack.deliverEvent(urls.events, mention);
    const reply = await waitForMessage(slack, CHAN, 'echo: what is 2+2?');
    expect(reply.thread_ts).toBe(mention.ts);
    expect(modelCallsFor('just chatting')).toBe(0);
    expect(messagesWith(slack, 'just chatting')).toHaveLength(0);
  });

  it('a DM from someone not on the allowlist gets the gateway refusal (through notify) and no model call', async () => {
    const { slack } = env;
    const STRANGER_IM = 'D0DM000099';
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'let me in', user: 'U0STRANGER', channel: STRANGER_IM }));
    const notice = await waitForMessage(slack, STRANGER_IM, 'allowlist');
    expect(notice.unfurl_links).toBe(false);
    expect(modelCallsFor('let me in')).toBe(0);
  });

  it('bot messages (another bot, our own echo) never reach the model', async () => {
    const { slack, gw } = env;
    const bots = [
      slack.events.botMessage({ text: `<@${slack.identity.botUserId}> bot says hi` }),
      slack.events.botMessage({ text: 'bot in a DM', channel: IM, channelType: 'im' }),
      slack.events.selfMessage({ text: 'our own echo', channel: IM, channelType: 'im' }),
    ];
    for (const b of bots) expect((await slack.deliverEvent(urls.events, b)).status).toBe(200);
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'a human after the bots' }));
    await waitForMessage(slack, IM, 'echo: a human after the bots');
    expect(modelCallsFor('bot says hi') + modelCallsFor('bot in a DM') + modelCallsFor('our own echo')).toBe(0);
    const sessions = await api(gw, 'GET', '/api/v1/sessions', { token: gw.credentials().operatorToken });
    expect(JSON.stringify(sessions.json)).not.toContain('bot says hi');
  });
});

describe('Slack replies: formatting, limits and failures', () => {
  it('escapes control characters, so model text cannot ping a channel or fake a link', async () => {
    const { model, slack } = env;
    model.enqueue({ text: 'Tell <!channel> & <@U0USER0002> about <https://evil.example|your bank>' });
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'format test' }));
    const m = await waitForMessage(slack, IM, 'Tell ');
    expect(m.text).toBe('Tell &lt;!channel&gt; &amp; &lt;@U0USER0002&gt; about &lt;https://evil.example|your bank&gt;');
  });

  it('a long answer is split into messages under 3,900 characters, each posted once, in the thread order', async () => {
    const { model, slack } = env;
    const paragraphs = Array.from({ length: 12 }, (_, i) => `Paragraph ${i + 1}: ${'lorem ipsum dolor sit amet '.repeat(28)}`);
    model.enqueue({ text: paragraphs.join('\n\n') });
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'write a lot' }));
    await waitForMessage(slack, IM, 'Paragraph 12:');
    const parts = slack.messages(IM).filter((m) => /Paragraph \d+:/.test(m.text));
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const p of parts) expect(p.text.length).toBeLessThanOrEqual(3900);
    for (let i = 1; i <= 12; i++) expect(parts.filter((p) => p.text.includes(`Paragraph ${i}:`))).toHaveLength(1);
  });

  it('a 429 from chat.postMessage is retried after Retry-After; the reply arrives once', async () => {
    const { slack } = env;
    slack.failNext('chat.postMessage', { status: 429, retryAfter: 1 });
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'rate limited reply' }));
    await waitForMessage(slack, IM, 'echo: rate limited reply');
    const posts = slack.callsTo('chat.postMessage');
    const limited = posts.findIndex((c) => c.status === 429);
    expect(limited).toBeGreaterThanOrEqual(0);
    expect(posts[limited + 1]!.receivedAt - posts[limited]!.receivedAt).toBeGreaterThanOrEqual(1000);
    expect(messagesWith(slack, 'echo: rate limited reply')).toHaveLength(1);
  });

  it('a model error becomes the final message', async () => {
    const { model, slack } = env;
    model.enqueue({ error: { status: 400, type: 'invalid_request_error', message: 'bad request for the test' } });
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'please fail' }));
    const m = await waitForMessage(slack, IM, ':warning:');
    expect(m.text.length).toBeGreaterThan(':warning: '.length);
  });

  it('answers /switchboard status over HTTP for a known person, ephemerally', async () => {
    const json = await postSlashCommand(env, 'status', IM);
    expect(json).toMatchObject({ response_type: 'ephemeral', text: expect.stringMatching(/Session/) });
  });

  it('never logs a token, signing secret or signature', () => {
    const { gw } = env;
    expect(leakedCanaries(gw)).toBe(0);
  });
});
