import { beforeAll, describe, expect, it } from 'vitest';
import { leakedCanaries, slackHealth, socketAccount, useSlackEnv, waitForMessage } from './slack-helpers.js';

/** The timers under test: a deaf socket must be noticed by our watchdog (3 s) well before the SDK's pong timeout (6 s). */
const LIVENESS_MS = 3000;
const TIMERS = { livenessTimeout: `${LIVENESS_MS}ms`, clientPingTimeout: '6s', reconnectBackoffMax: '2s' };

/** A log matcher for the n-th line containing `text` (waitForLog also scans earlier lines). */
const nth = (text: string, n: number) => {
  let seen = 0;
  return (line: string) => line.includes(text) && ++seen === n;
};

describe('Slack Socket Mode', () => {
  const env = useSlackEnv({ account: (slack) => socketAccount(slack, TIMERS) });
  let IM: string;

  beforeAll(async () => {
    IM = env.slack.identity.imChannelId;
    await env.gw.waitForLog(nth('slack socket connected', 1));
  });

  it('acks an envelope after storing it, and answers it', async () => {
    const { slack, gw } = env;
    expect(await slackHealth(gw)).toMatchObject({ state: 'up' });
    const ack = await slack.socketSend(slack.events.im({ text: 'hello over the socket' }));
    expect(ack.elapsedMs).toBeLessThan(3000);
    const reply = await waitForMessage(slack, IM, 'echo: hello over the socket');
    expect(reply.unfurl_links).toBe(false);
    expect(slack.callsTo('apps.connections.open').every((c) => c.tokenKind === 'app')).toBe(true);
  });

  it('answers a slash command in the ack payload', async () => {
    const { slack } = env;
    const ack = await slack.socketSendSlashCommand(slack.events.slashCommand({ command: '/switchboard', text: 'status', channel: IM }));
    expect(ack.payload).toMatchObject({ response_type: 'ephemeral', text: expect.stringMatching(/Session/) });
  });

  it('a deaf socket is replaced within the liveness timeout; health is down meanwhile; never two live sockets', async () => {
    const { slack, gw } = env;
    const opened = slack.socketStats().connectionsOpened;
    // The replacement says hello late, so the gap in which the account is down can be observed.
    slack.setHelloDelay(1500);
    const deafAt = Date.now();
    const deafId = slack.makeSocketDeaf();
    await gw.waitForLog(nth('slack socket unhealthy', 1), 10_000);
    expect(await slackHealth(gw)).toMatchObject({ state: 'down' });
    const fresh = await slack.waitFor(() => slack.sockets().find((s) => s.id > deafId), 10_000, 'a new socket');
    slack.setHelloDelay(0);
    const deaf = slack.sockets().find((s) => s.id === deafId)!;
    expect(deaf.closedAt).toBeDefined();
    expect(deaf.closedAt!).toBeLessThanOrEqual(fresh.openedAt);
    expect(fresh.openedAt - deafAt).toBeLessThan(LIVENESS_MS + 1500);
    await gw.waitForLog(nth('slack socket connected', 2), 10_000);
    expect(await slackHealth(gw)).toMatchObject({ state: 'up' });
    const ack = await slack.socketSend(slack.events.im({ text: 'after the reconnect' }));
    expect(ack.socketId).toBe(fresh.id);
    await waitForMessage(slack, IM, 'echo: after the reconnect');
    expect(slack.socketStats()).toMatchObject({ maxLive: 1, live: 1, connectionsOpened: opened + 1 });
  });

  it('a disconnect (refresh_requested) is followed by one new socket that gets the next envelope', async () => {
    const { slack } = env;
    const before = slack.socketStats();
    const last = slack.sockets().at(-1)!.id;
    expect(slack.socketDisconnect({ reason: 'refresh_requested' })).toBe(1);
    // Slack sends nothing more on a socket it asked to go; the next envelope waits for the new one.
    await slack.waitFor(() => slack.liveSockets() === 1 && slack.sockets().at(-1)!.id > last, 10_000, 'the new socket');
    const ack = await slack.socketSend(slack.events.im({ text: 'after the refresh' }));
    expect(ack.socketId).toBe(slack.sockets().at(-1)!.id);
    await waitForMessage(slack, IM, 'echo: after the refresh');
    expect(slack.socketStats()).toMatchObject({ maxLive: 1, live: 1, connectionsOpened: before.connectionsOpened + 1 });
  });

  it('a new socket that never says hello is given up after the liveness timeout; the next one is used', async () => {
    const { slack } = env;
    const last = slack.sockets().at(-1)!.id;
    slack.setHelloDelay(-1);
    expect(slack.socketDisconnect({ reason: 'refresh_requested' })).toBe(1);
    const silent = await slack.waitFor(() => slack.sockets().find((x) => x.id > last), 10_000, 'a socket without hello');
    slack.setHelloDelay(0);
    const ack = await slack.socketSend(slack.events.im({ text: 'after a silent socket' }), { timeoutMs: 15_000 });
    expect(ack.socketId).toBeGreaterThan(silent.id);
    expect(slack.sockets().find((x) => x.id === silent.id)!.closedAt).toBeDefined();
    await waitForMessage(slack, IM, 'echo: after a silent socket');
    expect(slack.socketStats().maxLive).toBe(1);
  });

  it('a shutdown while a reconnect waits on apps.connections.open exits cleanly; never two sockets; nothing leaked', async () => {
    const { slack, gw } = env;
    const opens = slack.callsTo('apps.connections.open').length;
    slack.failNext('apps.connections.open', { delayMs: 1500 });
    expect(slack.socketDisconnect({ reason: 'refresh_requested' })).toBe(1);
    await slack.waitFor(() => slack.callsTo('apps.connections.open').length > opens, 10_000, 'the reconnect request');
    const exit = await gw.stop();
    expect(exit.code).toBe(0);
    await slack.waitFor(() => slack.liveSockets() === 0, 5000, 'no live socket');
    expect(slack.socketStats().maxLive).toBe(1);
    expect(leakedCanaries(gw)).toBe(0);
  });
});

describe('Slack Socket Mode with server pings', () => {
  const env = useSlackEnv({ account: (slack) => socketAccount(slack, TIMERS), fakeSlack: { serverPingIntervalMs: 500 } });

  beforeAll(async () => {
    await env.gw.waitForLog(nth('slack socket connected', 1));
  });

  it('a socket that still pongs but gets no pings or envelopes any more is treated as deaf and replaced', async () => {
    const { slack, gw } = env;
    await slack.waitFor(() => (slack.sockets()[0]!.pingsSent >= 2 ? true : undefined), 5000, 'server pings');
    const deafId = slack.makeSocketDeaf({ answerPings: true });
    await gw.waitForLog(nth('slack socket unhealthy', 1), 10_000);
    const ack = await slack.socketSend(slack.events.im({ text: 'after a pong-only socket' }), { timeoutMs: 10_000 });
    expect(ack.socketId).toBeGreaterThan(deafId);
    const deaf = slack.sockets().find((s) => s.id === deafId)!;
    expect(deaf.pongsSent).toBe(deaf.pingsReceived);
    await waitForMessage(slack, slack.identity.imChannelId, 'echo: after a pong-only socket');
    expect(slack.socketStats().maxLive).toBe(1);
  });
});
