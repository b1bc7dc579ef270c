import {
  type FakeAnthropic,
  type FakeSlack,
  type PgServer,
  type Replicas,
  startFakeAnthropic,
  startFakeSlack,
  startPostgres,
  leaseAcquired,
  startReplicas,
  stopAllGateways,
} from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messagesWith, slackConfig, socketAccount, waitForMessage } from './slack-helpers.js';

// Slack Socket Mode across replicas (issue 20): one replica holds the app's socket under
// receiver:slack:team; SIGTERM hands it to another replica at once (the lease is released and the
// standby woken, not left to lapse), and there is never more than one live socket.
let pg: PgServer;
let model: FakeAnthropic;
let slack: FakeSlack;
let replicas: Replicas;
const LEASE = 'receiver:slack:team';
const acquired = leaseAcquired(LEASE);

beforeAll(async () => {
  pg = await startPostgres();
  model = await startFakeAnthropic();
  slack = await startFakeSlack();
  replicas = await startReplicas({
    count: 2,
    pg: await pg.createDatabase(),
    modelUrl: model.url,
    // A lease lapses only after 10 minutes and is renewed every 200 s: a standby takes a released
    // lease at once only because the releasing replica wakes it (NOTIFY), which is what this file checks.
    config: { replicas: { leaseTtl: '10m' }, ...slackConfig(socketAccount(slack)) },
  });
});

afterAll(async () => {
  await replicas?.close();
  await stopAllGateways();
  await slack?.close();
  await model?.close();
  await pg?.destroy();
});

describe('Slack Socket Mode across replicas', () => {
  let holder = -1;

  it('one replica holds the socket; an event is answered once', async () => {
    const { index } = await replicas.waitForLog(acquired);
    holder = index;
    await replicas.at(holder).waitForLog('slack socket connected', 15_000);
    const standby = (await replicas.readyz(1 - holder)).body.channels as Record<string, { state: string; detail: string }>;
    expect(standby['slack:team']).toMatchObject({ state: 'up', detail: expect.stringMatching(/^standby/) });
    await slack.socketSend(slack.events.im({ text: 'first over the socket' }));
    await waitForMessage(slack, slack.identity.imChannelId, 'echo: first over the socket');
    expect(slack.socketStats()).toMatchObject({ live: 1, maxLive: 1 });
  });

  it('SIGTERM of the holder hands the socket to the other replica; nothing is answered twice', async () => {
    const mark = replicas.mark();
    const other = 1 - holder;
    const stopping = replicas.stop(holder);
    const released = await replicas.at(holder).waitForLog((l) => l.includes('"event":"lease_released"') && l.includes(`"lease":"${LEASE}"`), 15_000);
    expect(released).toContain(replicas.replicaId(holder));
    const next = await replicas.waitForLog(acquired, { since: mark, timeoutMs: 15_000 });
    expect(next.index).toBe(other);
    expect((await stopping).code).toBe(0);
    await replicas.at(other).waitForLog('slack socket connected', 15_000);
    await slack.socketSend(slack.events.im({ text: 'after the handoff' }));
    await waitForMessage(slack, slack.identity.imChannelId, 'echo: after the handoff');
    await replicas.restart(holder);
    await slack.socketSend(slack.events.im({ text: 'with both back' }));
    await waitForMessage(slack, slack.identity.imChannelId, 'echo: with both back');
    for (const text of ['echo: first over the socket', 'echo: after the handoff', 'echo: with both back']) expect(messagesWith(slack, text)).toHaveLength(1);
    // The old socket was closed before the new one opened.
    expect(slack.socketStats()).toMatchObject({ live: 1, maxLive: 1, connectionsOpened: 2 });
  });
});
