import {
  type FakeAnthropic,
  type FakeTelegram,
  type PgServer,
  type Replicas,
  startFakeAnthropic,
  startFakeTelegram,
  startPostgres,
  leaseAcquired,
  startReplicas,
  stopAllGateways,
} from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { byTestId, shot, signIn, useBrowser } from './browser-helpers.js';
import { BOT_USERNAME, telegramAccount, TOKEN } from './telegram-helpers.js';

// The console's overview shows the replicas on the database and which one receives for which
// account (issue 20: "the control API and console show the replicas and which accounts each holds").
let pg: PgServer;
let model: FakeAnthropic;
let tg: FakeTelegram;
let replicas: Replicas;
const LEASE = 'receiver:telegram:main';
const acquired = leaseAcquired(LEASE);

beforeAll(async () => {
  pg = await startPostgres();
  model = await startFakeAnthropic();
  tg = await startFakeTelegram({ bots: [{ token: TOKEN, username: BOT_USERNAME, first_name: 'Switchboard' }] });
  replicas = await startReplicas({
    count: 2,
    pg: await pg.createDatabase(),
    modelUrl: model.url,
    config: { replicas: { leaseTtl: '2s' }, console: { enabled: true }, channels: { telegram: { accounts: { main: telegramAccount(tg) } } } },
  });
});

afterAll(async () => {
  await replicas?.close();
  await stopAllGateways();
  await tg?.close();
  await model?.close();
  await pg?.destroy();
});

const b = useBrowser();

describe('console: replicas on the overview', () => {
  it('lists both replicas and who polls Telegram; after kill -9 of the poller, the other one does', async () => {
    const { index: holder } = await replicas.waitForLog(acquired);
    const other = 1 - holder;
    const [holderId, otherId] = [replicas.replicaId(holder), replicas.replicaId(other)];
    const g = await b.open();
    await signIn(g.page, replicas.at(other), replicas.credentials().operatorToken, 'overview');
    await byTestId(g.page, `replica-${holderId}`).waitFor();
    expect(await byTestId(g.page, `replica-receivers-${holderId}`).textContent()).toBe('receives for telegram:main');
    expect(await byTestId(g.page, `replica-receivers-${otherId}`).textContent()).toBe('no receiver');
    expect(await byTestId(g.page, `replica-${otherId}`).getAttribute('data-self')).toBe('true');
    await shot(g.page, 'console-replicas');

    const mark = replicas.mark();
    await replicas.kill(holder);
    expect((await replicas.waitForLog(acquired, { since: mark, timeoutMs: 30_000 })).index).toBe(other);
    await g.page.reload();
    await byTestId(g.page, `replica-receivers-${otherId}`).waitFor();
    expect(await byTestId(g.page, `replica-receivers-${otherId}`).textContent()).toBe('receives for telegram:main');
    // The dead replica's presence lapsed with its receiver lease, before the other could take it.
    expect(await byTestId(g.page, `replica-${holderId}`).count()).toBe(0);
    await shot(g.page, 'console-replicas-after-failover');
  });
});
