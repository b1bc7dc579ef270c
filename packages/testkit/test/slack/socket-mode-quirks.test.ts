import { SocketModeClient } from '@slack/socket-mode';
import { afterEach, describe, expect, it } from 'vitest';
import { CANARY_SLACK_APP_TOKEN, startFakeSlack, type FakeSlack } from '../../src/index.js';
import { silentLogger } from './silent-logger.js';

/**
 * Behaviour of @slack/socket-mode 3.1.0 that a channel implementation must work around. These tests pin
 * the current SDK behaviour, so an SDK upgrade that fixes it shows up here as a failure to re-check.
 */
let fake: FakeSlack | undefined;
const clients: SocketModeClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.disconnect();
  await fake?.close();
  fake = undefined;
});

async function setup() {
  const f = await startFakeSlack();
  fake = f;
  const c = new SocketModeClient({ appToken: CANARY_SLACK_APP_TOKEN, clientOptions: { slackApiUrl: f.apiUrl }, clientPingTimeout: 600, logger: silentLogger });
  clients.push(c);
  const states: string[] = [];
  for (const s of ['connected', 'reconnecting', 'disconnected']) c.on(s, () => states.push(s));
  return { f, c, states };
}

describe('@slack/socket-mode 3.1.0 quirks, reproduced against the fake', () => {
  it('disconnect() while a reconnect awaits apps.connections.open resolves, then the client connects anyway', async () => {
    const { f, c, states } = await setup();
    await c.start();
    f.failNext('apps.connections.open', { delayMs: 500 });
    f.socketDisconnect({ reason: 'refresh_requested' });
    await f.waitFor(() => f.callsTo('apps.connections.open').length === 2, 5000, 'the reconnect apps.connections.open');
    await c.disconnect();
    expect(f.liveSockets()).toBe(0);
    // start() (re-entered by the reconnect timer) resets shuttingDown=false, so the late URL is used:
    await f.waitFor(() => states.filter((s) => s === 'connected').length === 2, 5000, 'the zombie connection');
    expect(f.liveSockets()).toBe(1);
    expect(states).toEqual(['connected', 'reconnecting', 'disconnected', 'connected']);
  });

  it('disconnect() before the reconnected socket says hello rejects the internal start() with `undefined` (unhandled in the SDK)', async () => {
    const { f, c } = await setup();
    // Workaround a channel needs: catch rejections of the start() the reconnect timer calls (an own property wins).
    const reconnectRejections: unknown[] = [];
    const original = c.start.bind(c);
    let first = true;
    Object.assign(c, {
      start: () => {
        if (first) {
          first = false;
          return original();
        }
        return original().catch((err: unknown) => void reconnectRejections.push(err));
      },
    });
    await c.start();
    f.setHelloDelay(-1);
    f.socketDisconnect({ reason: 'refresh_requested' });
    await f.waitFor(() => f.socketStats().connectionsOpened === 2, 5000, 'the second socket');
    await c.disconnect();
    await f.waitFor(() => reconnectRejections.length === 1, 2000, 'the swallowed rejection');
    expect(reconnectRejections).toEqual([undefined]);
    expect(f.socketStats()).toMatchObject({ maxLive: 1, connectionsOpened: 2 });
  });

  it('a half-open socket (nothing read, not even the close frame) is dropped one ping interval after the pong timeout', async () => {
    const { f, c, states } = await setup();
    await c.start();
    const t0 = Date.now();
    f.makeSocketDeaf({ halfOpen: true });
    await f.waitFor(() => states.filter((s) => s === 'connected').length === 2, 5000, 'the reconnect');
    // pong timeout (~600 ms) + one 200 ms ping interval in CLOSING (force-terminate) + the 600 ms reconnect delay
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1200);
    // The fake never read the FIN either, so from the server's side two sockets are "live" now.
    expect(f.liveSockets()).toBe(2);
  });
});
