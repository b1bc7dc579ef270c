import { SocketModeClient } from '@slack/socket-mode';
import { WebAPIPlatformError } from '@slack/web-api';
import { afterEach, describe, expect, it } from 'vitest';
import { CANARY_SLACK_APP_TOKEN, CANARY_SLACK_BOT_TOKEN, startFakeSlack, type FakeSlack, type FakeSlackOptions } from '../../src/index.js';
import { silentLogger } from './silent-logger.js';

/** clientPingTimeout 600 ms → the SDK pings every 200 ms and waits 600 ms × n before reconnect attempt n. */
const PING_MS = 600;
let fake: FakeSlack | undefined;
let client: SocketModeClient | undefined;

afterEach(async () => {
  await client?.disconnect();
  client = undefined;
  await fake?.close();
  fake = undefined;
});

async function setup(fakeOpts: FakeSlackOptions = {}, clientOpts: Partial<ConstructorParameters<typeof SocketModeClient>[0]> = {}) {
  const f = await startFakeSlack(fakeOpts);
  const c = new SocketModeClient({
    appToken: CANARY_SLACK_APP_TOKEN,
    clientOptions: { slackApiUrl: f.apiUrl },
    clientPingTimeout: PING_MS,
    logger: silentLogger,
    ...clientOpts,
  });
  fake = f;
  client = c;
  const connectedAt: number[] = [];
  const liveAtConnect: number[] = [];
  c.on('connected', () => {
    connectedAt.push(Date.now());
    liveAtConnect.push(f.liveSockets());
  });
  return { f, c, connectedAt, liveAtConnect };
}

describe('Socket Mode with the real @slack/socket-mode 3 client', () => {
  it('connects via apps.connections.open (app token) + hello; receives an events_api envelope and acks it', async () => {
    const { f, c } = await setup();
    await c.start();
    expect(f.liveSockets()).toBe(1);
    expect(f.callsTo('apps.connections.open')).toEqual([expect.objectContaining({ tokenKind: 'app', ok: true })]);
    const got: Array<{ type: string; retry: unknown; reason: unknown }> = [];
    c.on('app_mention', async ({ ack, event, retry_num, retry_reason }) => {
      got.push({ type: event.type, retry: retry_num, reason: retry_reason });
      await ack();
    });
    const ack = await f.socketSend(f.events.appMention({ text: 'hi' }), { retryAttempt: 2, retryReason: 'timeout' });
    expect(ack).toMatchObject({ type: 'events_api', socketId: 1, payload: {} });
    expect(ack.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(got).toEqual([{ type: 'app_mention', retry: 2, reason: 'timeout' }]);
  });

  it('an envelope nobody acks makes socketSend reject after its timeout', async () => {
    const { f, c } = await setup();
    await c.start();
    await expect(f.socketSend(f.events.im({ text: 'ignored' }), { timeoutMs: 300 })).rejects.toThrow(/not acked within 300 ms/);
  });

  it('interactive and slash_commands envelopes; an ack body comes back as the payload', async () => {
    const { f, c } = await setup();
    await c.start();
    const flags: unknown[] = [];
    c.on('interactive', async ({ ack, body, accepts_response_payload }) => {
      flags.push(accepts_response_payload, body.type);
      await ack();
    });
    c.on('slash_commands', async ({ ack, body, accepts_response_payload }) => {
      flags.push(accepts_response_payload, body.command);
      await ack({ text: `got ${body.text}` });
    });
    const a1 = await f.socketSendInteractive(f.events.blockActions({ actionId: 'approve' }), { acceptsResponsePayload: false });
    const a2 = await f.socketSendSlashCommand(f.events.slashCommand({ command: '/ask', text: 'why' }));
    expect(a1.type).toBe('interactive');
    expect(a2).toMatchObject({ type: 'slash_commands', payload: { text: 'got why' } });
    expect(flags).toEqual([false, 'block_actions', true, '/ask']);
    expect(f.acks.map((a) => a.type)).toEqual(['interactive', 'slash_commands']);
  });

  it.each(['refresh_requested', 'warning'] as const)(
    'disconnect (%s): the client closes, waits clientPingTimeout, reconnects; one live socket at a time',
    async (reason) => {
      const { f, c, connectedAt, liveAtConnect } = await setup();
      await c.start();
      expect(f.socketDisconnect({ reason })).toBe(1);
      await f.waitFor(() => f.socketStats().connectionsOpened === 2 && f.liveSockets() === 1 && connectedAt.length === 2, 5000, 'the reconnect');
      expect(f.socketStats()).toMatchObject({ maxLive: 1, connectionsOpenCalls: 2, connectionsOpened: 2 });
      expect(liveAtConnect).toEqual([1, 1]);
      expect(connectedAt[1]! - connectedAt[0]!).toBeGreaterThanOrEqual(PING_MS - 50);
      c.on('message', ({ ack }) => void ack());
      await expect(f.socketSend(f.events.im({ text: 'after refresh' }))).resolves.toMatchObject({ socketId: 2 });
    },
  );

  it('deaf socket: no pongs → the client ping check notices, reconnects; an envelope sent meanwhile lands on the new socket', async () => {
    const { f, c } = await setup();
    await c.start();
    c.on('message', ({ ack }) => void ack());
    // A healthy socket survives many ping intervals (pongs are answered).
    await f.waitFor(() => (f.sockets()[0]!.pingsReceived >= 6 ? true : undefined), 3000, 'six client pings');
    expect(f.sockets()[0]).toMatchObject({ pongsSent: f.sockets()[0]!.pingsReceived });
    expect(f.socketStats().connectionsOpened).toBe(1);
    const deafAt = Date.now();
    expect(f.makeSocketDeaf()).toBe(1);
    const ack = await f.socketSend(f.events.im({ text: 'while deaf' }), { timeoutMs: 8000 });
    expect(ack.socketId).toBe(2);
    const [s1, s2] = f.sockets();
    expect(s1).toMatchObject({ deaf: true, envelopesSent: 0, closeCode: 1000 });
    expect(s1!.closedAt! - deafAt).toBeGreaterThanOrEqual(PING_MS - 50);
    expect(s1!.closedAt!).toBeLessThanOrEqual(s2!.openedAt);
    expect(f.socketStats()).toMatchObject({ maxLive: 1, live: 1, connectionsOpenCalls: 2 });
  });

  it('deaf socket that still pongs: only serverPingTimeout (armed by server pings) notices', async () => {
    const { f, c, connectedAt } = await setup({ serverPingIntervalMs: 200 }, { serverPingTimeout: 800 });
    await c.start();
    await f.waitFor(() => (f.sockets()[0]!.pingsSent >= 2 ? true : undefined), 3000, 'server pings');
    const deafAt = Date.now();
    f.makeSocketDeaf({ answerPings: true });
    await f.waitFor(() => connectedAt.length === 2 && f.liveSockets() === 1, 5000, 'the reconnect');
    const s1 = f.sockets()[0]!;
    expect(s1.closedAt! - deafAt).toBeGreaterThanOrEqual(700);
    expect(s1.pongsSent).toBe(s1.pingsReceived);
    expect(f.socketStats().maxLive).toBe(1);
  });

  it('apps.connections.open: invalid_auth is unrecoverable, start() rejects', async () => {
    const { f, c } = await setup({ appToken: 'xapp-1-some-other-app' });
    await expect(c.start()).rejects.toBeInstanceOf(WebAPIPlatformError);
    expect(f.callsTo('apps.connections.open')).toEqual([expect.objectContaining({ tokenKind: 'unknown', error: 'invalid_auth' })]);
    expect(f.liveSockets()).toBe(0);
  });

  it('apps.connections.open: an HTTP 500 is retried by the WebClient (socket-mode sets retries:100, factor 1.3)', async () => {
    const { f, c } = await setup();
    f.failNext('apps.connections.open', { status: 500 });
    await c.start();
    expect(f.callsTo('apps.connections.open').map((x) => x.status)).toEqual([500, 200]);
    expect(f.liveSockets()).toBe(1);
  });

  it('a bot token used as the app token (not_allowed_token_type) is treated as recoverable: start() keeps retrying', async () => {
    const { f, c } = await setup({}, { appToken: CANARY_SLACK_BOT_TOKEN });
    let settled = false;
    void c.start().then(
      () => (settled = true),
      () => (settled = true),
    );
    await f.waitFor(() => f.callsTo('apps.connections.open').length >= 2, 3000, 'a second apps.connections.open');
    expect(f.callsTo('apps.connections.open').every((x) => x.error === 'not_allowed_token_type')).toBe(true);
    expect(settled).toBe(false);
  });
});
