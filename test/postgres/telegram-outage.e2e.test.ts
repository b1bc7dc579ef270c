import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PgServer, setGatewayStorage, startPostgres } from '@switchboard/testkit';
import { ALICE, TOKEN, useTelegramEnv, waitForText } from '../telegram-helpers.js';

// Issue 19, acceptance 4, for a polling channel: an update that arrives while PostgreSQL is down
// is not confirmed (the offset stays), never dead-lettered, and answered once the database is back.
let server: PgServer | undefined;
beforeAll(async () => {
  server = await startPostgres();
  const pgServer = server;
  setGatewayStorage(async () => ({ kind: 'postgres', url: await pgServer.createDatabase(), healthInterval: '200ms', connectionTimeout: '1s' }));
});
afterAll(async () => {
  setGatewayStorage(null);
  await server?.destroy();
});
// Two attempts: were an outage counted as failed attempts, the update would be dead-lettered.
const env = useTelegramEnv({ dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)], retryBaseDelay: 200 }, { limits: { inboxMaxAttempts: 2 } });

describe('telegram on PostgreSQL: a database outage', () => {
  it('keeps the update unconfirmed while the database is down and answers it once it is back', async () => {
    const { tg, model, gw } = env;
    await tg.waitForAnswered('getUpdates');
    // Start-up is over (interrupted turns resumed) before the database goes away.
    await gw.waitForLog((l) => l.includes('"event":"listening"'));
    await server!.stop();
    await gw.waitForLog((l) => l.includes('"event":"storage_down"'));
    model.enqueue({ text: 'Answered after the outage.' });
    const update = tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'sent during the outage' });
    await gw.waitForLog((l) => l.includes('"event":"telegram_update_deferred"'), 20_000);
    expect(tg.pendingUpdates(TOKEN).map((u) => u.update_id)).toContain(update.update_id);

    await server!.start();
    await waitForText(tg, ALICE.dm.id, 'Answered after the outage.', 30_000);
    expect(tg.pendingUpdates(TOKEN)).toEqual([]);
    expect(gw.logs().some((l) => l.includes('"event":"dead_letter"'))).toBe(false);
    expect(gw.child.exitCode).toBeNull();
  });
});
