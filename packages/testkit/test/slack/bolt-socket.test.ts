import { App, SocketModeReceiver } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { CANARY_SLACK_APP_TOKEN, CANARY_SLACK_BOT_TOKEN, startFakeSlack, type FakeSlack } from '../../src/index.js';
import { silentLogger } from './silent-logger.js';

/** Bolt 5 in Socket Mode against the fake: ack timing, ping options, and the shared clientOptions object. */
let fake: FakeSlack | undefined;
let app: App | undefined;

afterEach(async () => {
  await app?.stop();
  app = undefined;
  await fake?.close();
  fake = undefined;
});

describe('Bolt 5 Socket Mode against the fake', () => {
  it('SocketModeReceiver (ping options set): events are acked before the listener runs; commands when the listener acks', async () => {
    const f = (fake = await startFakeSlack());
    const clientOptions = { slackApiUrl: f.apiUrl, retryConfig: { retries: 0 } };
    const receiver = new SocketModeReceiver({
      appToken: CANARY_SLACK_APP_TOKEN,
      clientPingTimeout: 600,
      serverPingTimeout: 1500,
      logger: silentLogger,
      installerOptions: { clientOptions },
    });
    const a = (app = new App({ token: CANARY_SLACK_BOT_TOKEN, receiver, logger: silentLogger, clientOptions }));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    a.event('app_mention', async ({ event, say }) => {
      await gate; // the listener is blocked until the test has seen the ack
      await say({ text: 'done', thread_ts: event.ts });
    });
    a.command('/ask', async ({ ack, command }) => {
      await new Promise((r) => setTimeout(r, 300));
      await ack({ response_type: 'ephemeral', text: `thinking about ${command.text}` });
    });
    await a.start();
    expect(f.callsTo('apps.connections.open')).toEqual([expect.objectContaining({ tokenKind: 'app' })]);

    const ev = f.events.appMention({ text: 'go' });
    const ack = await f.socketSend(ev);
    expect(ack.payload).toEqual({});
    expect(f.messages('C0CHAN0001')).toEqual([]);
    release();
    await f.waitFor(() => f.messages('C0CHAN0001').find((m) => m.thread_ts === ev.ts), 3000, 'the reply');

    const cmd = await f.socketSendSlashCommand(f.events.slashCommand({ command: '/ask', text: 'life' }));
    expect(cmd.elapsedMs).toBeGreaterThanOrEqual(290);
    expect(cmd.payload).toEqual({ response_type: 'ephemeral', text: 'thinking about life' });

    // The receiver's ping options are live: a deaf socket is replaced.
    f.makeSocketDeaf();
    await f.waitFor(() => f.socketStats().connectionsOpened === 2 && f.liveSockets() === 1, 5000, 'the reconnect');
    await expect(f.socketSend(f.events.appMention({ text: 'again' }))).resolves.toMatchObject({ socketId: 2 });
    expect(f.socketStats().maxLive).toBe(1);
  });

  it('App({ socketMode: true }) forwards clientOptions to the socket client, which writes its retryConfig into that shared object', async () => {
    const f = (fake = await startFakeSlack());
    const clientOptions: Record<string, unknown> = { slackApiUrl: f.apiUrl };
    const a = (app = new App({ token: CANARY_SLACK_BOT_TOKEN, appToken: CANARY_SLACK_APP_TOKEN, socketMode: true, logger: silentLogger, clientOptions }));
    // SocketModeClient fills in `retryConfig` for apps.connections.open on the very object Bolt also uses for listener clients.
    expect(clientOptions.retryConfig).toEqual({ retries: 100, factor: 1.3 });
    expect(a.webClientOptions).toBe(clientOptions);
    a.event('app_mention', async ({ client, event }) => {
      await client.chat.postMessage({ channel: event.channel, text: 'retried', thread_ts: event.ts });
    });
    await a.start();
    f.failNext('chat.postMessage', { status: 500 });
    const ev = f.events.appMention({ text: 'hi' });
    await f.socketSend(ev);
    await f.waitFor(() => f.messages('C0CHAN0001').find((m) => m.thread_ts === ev.ts), 5000, 'the retried reply');
    // The listener's client inherited that policy: the 500 was retried (p-retry, ~1 s).
    expect(f.callsTo('chat.postMessage').map((c) => c.status)).toEqual([500, 200]);
  });
});
