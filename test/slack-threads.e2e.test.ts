import { beforeAll, describe, expect, it } from 'vitest';
import { api, type FakeAnthropic, type FakeSlack, type GatewayProcess, type RecordedRequest } from '@switchboard/testkit';
import { postedCanaries } from './slack-leaks.js';
import { httpAccount, leakedCanaries, messagesWith, slackUrls, USER, useSlackEnv, waitForMessage } from './slack-helpers.js';

const TEAMMATE = 'U0USER0002';
const TEAM_IM = 'D0DM000002';

const env = useSlackEnv({ account: (slack) => httpAccount(slack, { allowFrom: [USER, TEAMMATE] }) });
let model: FakeAnthropic;
let slack: FakeSlack;
let gw: GatewayProcess;
let urls: { events: string; interactive: string };
let CHAN: string;
let IM: string;
/** The thread of the first test's mention. */
let firstThread: string;

beforeAll(() => {
  ({ model, slack, gw } = env);
  CHAN = slack.identity.channelId;
  IM = slack.identity.imChannelId;
  urls = slackUrls(gw);
});

/** Everything a model request carried, as one string. */
const history = (r: RecordedRequest) => JSON.stringify(r.body.messages ?? []);
/** The model requests that carried `text` anywhere in their history. */
const requestsWith = (text: string) => model.requests.filter((r) => history(r).includes(text));
/** The model request whose last message contains `text`. */
const requestFor = (text: string) => {
  const r = model.requests.find((x) => JSON.stringify(x.body.messages?.at(-1) ?? null).includes(text));
  if (!r) throw new Error(`no model request for ${JSON.stringify(text)}`);
  return r;
};

type SessionView = { id: string; scope: string; conversation: string | null; thread: string | null; principalId: string | null };
const sessions = async (): Promise<SessionView[]> =>
  (await api(gw, 'GET', '/api/v1/sessions?channel=slack', { token: gw.credentials().operatorToken })).json.sessions;

describe('Slack threads in a channel', () => {
  it('a mention is answered in a thread; a follow-up in that thread without a mention is answered in the same session', async () => {
    const mention = slack.events.appMention({ text: 'remember the word pineapple' });
    firstThread = mention.ts as string;
    await slack.deliverEvent(urls.events, mention);
    const first = await waitForMessage(slack, CHAN, 'echo: remember the word pineapple');
    expect(first.thread_ts).toBe(mention.ts);

    // Slack sends a plain `message` (no app_mention) for a thread reply without a mention.
    const followUp = slack.events.threadReply({ text: 'what was the word?', threadTs: mention.ts as string });
    expect((await slack.deliverEvent(urls.events, followUp)).status).toBe(200);
    const second = await waitForMessage(slack, CHAN, 'echo: what was the word?');
    expect(second.thread_ts).toBe(mention.ts);

    // The model saw the earlier exchange: the first question and its answer.
    const req = requestFor('what was the word?');
    expect(history(req)).toContain('remember the word pineapple');
    expect(history(req)).toContain('echo: remember the word pineapple');
    const threadSessions = (await sessions()).filter((s) => s.thread === mention.ts);
    expect(threadSessions).toHaveLength(1);
    expect(threadSessions[0]).toMatchObject({ scope: 'room', conversation: CHAN });
  });

  it('a different thread is a different session; an unmentioned reply in a thread the bot never answered is ignored', async () => {
    const other = slack.events.appMention({ text: 'a fresh topic about mangoes' });
    await slack.deliverEvent(urls.events, other);
    const reply = await waitForMessage(slack, CHAN, 'echo: a fresh topic about mangoes');
    expect(reply.thread_ts).toBe(other.ts);
    expect(history(requestFor('a fresh topic about mangoes'))).not.toContain('pineapple');

    // A thread under someone's un-mentioned message: the bot is not part of it.
    const chatter = slack.events.channelMessage({ text: 'people talking among themselves' });
    await slack.deliverEvent(urls.events, chatter);
    await slack.deliverEvent(urls.events, slack.events.threadReply({ text: 'still not for the bot', threadTs: chatter.ts as string }));
    // A later follow-up in the second thread proves the earlier events were processed (and ignored).
    await slack.deliverEvent(urls.events, slack.events.threadReply({ text: 'and mangoes are yellow', threadTs: other.ts as string }));
    await waitForMessage(slack, CHAN, 'echo: and mangoes are yellow');
    expect(history(requestFor('and mangoes are yellow'))).toContain('a fresh topic about mangoes');
    expect(history(requestFor('and mangoes are yellow'))).not.toContain('pineapple');
    expect(requestsWith('people talking among themselves')).toHaveLength(0);
    expect(requestsWith('still not for the bot')).toHaveLength(0);

    const rooms = (await sessions()).filter((s) => s.scope === 'room' && s.conversation === CHAN);
    const threads = rooms.map((s) => s.thread).sort();
    expect(threads).toEqual([firstThread, other.ts].sort());
    expect(new Set(rooms.map((s) => s.id)).size).toBe(2);
  });

  it('after a restart, an unmentioned follow-up in a thread the bot answered in is still answered', async () => {
    const mention = slack.events.appMention({ text: 'before the restart' });
    await slack.deliverEvent(urls.events, mention);
    await waitForMessage(slack, CHAN, 'echo: before the restart');
    gw = env.gw = await gw.restart();
    urls = slackUrls(gw);
    await slack.deliverEvent(urls.events, slack.events.threadReply({ text: 'after the restart', threadTs: mention.ts as string }));
    const reply = await waitForMessage(slack, CHAN, 'echo: after the restart');
    expect(reply.thread_ts).toBe(mention.ts);
    expect(history(requestFor('after the restart'))).toContain('before the restart');
  });
});

describe('Slack message edits and deletions', () => {
  it('message_changed and message_deleted events never start a turn', async () => {
    const original = slack.events.im({ text: 'an original DM' });
    await slack.deliverEvent(urls.events, original);
    await waitForMessage(slack, IM, 'echo: an original DM');
    const mention = slack.events.appMention({ text: 'an original mention' });
    await slack.deliverEvent(urls.events, mention);
    await waitForMessage(slack, CHAN, 'echo: an original mention');
    const calls = model.requests.length;

    const changed = (channel: string, channelType: string, of: Record<string, unknown>, text: string) => {
      const ts = slack.events.nextTs();
      return {
        type: 'message',
        subtype: 'message_changed',
        hidden: true,
        channel,
        channel_type: channelType,
        ts,
        event_ts: ts,
        message: { type: 'message', user: USER, text, ts: of.ts, edited: { user: USER, ts }, ...(of.thread_ts ? { thread_ts: of.thread_ts } : {}) },
        previous_message: { type: 'message', user: USER, text: of.text, ts: of.ts },
      };
    };
    const deleted = (channel: string, channelType: string, of: Record<string, unknown>) => {
      const ts = slack.events.nextTs();
      return {
        type: 'message',
        subtype: 'message_deleted',
        hidden: true,
        channel,
        channel_type: channelType,
        ts,
        event_ts: ts,
        deleted_ts: of.ts,
        previous_message: { type: 'message', user: USER, text: of.text, ts: of.ts },
      };
    };
    const bot = `<@${slack.identity.botUserId}>`;
    const inThread = slack.events.threadReply({ text: 'a reply in the thread', threadTs: mention.ts as string });
    const events = [
      changed(IM, 'im', original, 'an edited DM'),
      changed(CHAN, 'channel', mention, `${bot} an edited mention`),
      changed(CHAN, 'channel', inThread, 'an edited thread reply'),
      deleted(IM, 'im', original),
      deleted(CHAN, 'channel', mention),
    ];
    for (const ev of events) expect((await slack.deliverEvent(urls.events, ev)).status).toBe(200);

    // Later messages in both lanes: a turn for an edit or deletion would have run before them.
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'after the edits' }));
    await slack.deliverEvent(urls.events, slack.events.threadReply({ text: 'thread after the edits', threadTs: mention.ts as string }));
    await waitForMessage(slack, IM, 'echo: after the edits');
    await waitForMessage(slack, CHAN, 'echo: thread after the edits');
    expect(model.requests.length).toBe(calls + 2);
    for (const text of ['an edited DM', 'an edited mention', 'an edited thread reply']) expect(requestsWith(text)).toHaveLength(0);
    expect(messagesWith(slack, 'echo: an original DM')).toHaveLength(1);
    expect(messagesWith(slack, 'echo: an original mention')).toHaveLength(1);
  });
});

describe('Slack users', () => {
  it('a person is the identity slack:<team>:<user>; users.info is asked once for two messages', async () => {
    const before = slack.callsTo('users.info').filter((c) => c.params.user === TEAMMATE).length;
    expect(before).toBe(0);
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'first from the teammate', user: TEAMMATE, channel: TEAM_IM }));
    await waitForMessage(slack, TEAM_IM, 'echo: first from the teammate');
    await slack.deliverEvent(urls.events, slack.events.im({ text: 'second from the teammate', user: TEAMMATE, channel: TEAM_IM }));
    await waitForMessage(slack, TEAM_IM, 'echo: second from the teammate');
    expect(slack.callsTo('users.info').filter((c) => c.params.user === TEAMMATE)).toHaveLength(1);

    const list = await api(gw, 'GET', '/api/v1/principals', { token: gw.credentials().operatorToken });
    type P = { id: string; name: string; identities: Array<{ identity: string }> };
    const identity = `slack:${slack.identity.teamId}:${TEAMMATE}`;
    const mate = (list.json.principals as P[]).filter((p) => p.identities.some((i) => i.identity === identity));
    expect(mate).toHaveLength(1);
    // Named after the Slack display name the fake answers users.info with.
    expect(mate[0]!.name).toBe(`user-${TEAMMATE.toLowerCase()}`);
    // Both messages are one DM session of that person.
    const dms = (await sessions()).filter((s) => s.scope === 'dm' && s.principalId === mate[0]!.id);
    expect(dms).toHaveLength(1);
    expect(history(requestFor('second from the teammate'))).toContain('first from the teammate');
  });

  it('never puts a token or the signing secret in a message or a log', () => {
    expect(postedCanaries(slack)).toBe(0);
    expect(leakedCanaries(gw)).toBe(0);
  });
});
