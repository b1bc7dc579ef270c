import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeAnthropic,
  type FakeTelegram,
  type PgServer,
  type Replicas,
  startFakeAnthropic,
  startFakeTelegram,
  startPostgres,
  startReplicas,
  stopAllGateways,
} from '@switchboard/testkit';
import { storeRows } from './store-rows.js';
import { ALICE, BOT_USERNAME, params, TOKEN, telegramAccount, waitForText } from './telegram-helpers.js';

// Issue 20, acceptance 2 on Telegram: three replicas on one PostgreSQL, Telegram polled by one of
// them under its receiver lease. The replica running a turn is killed mid-stream; once its session
// lease (2 s) lapsed another replica resumes the turn, reuses the recorded draft and posts one final.
let pg: PgServer;
let model: FakeAnthropic;
let tg: FakeTelegram;
let replicas: Replicas;

beforeAll(async () => {
  pg = await startPostgres();
  model = await startFakeAnthropic();
  tg = await startFakeTelegram({ bots: [{ token: TOKEN, username: BOT_USERNAME, first_name: 'Switchboard' }] });
  replicas = await startReplicas({
    count: 3,
    pg: await pg.createDatabase(),
    modelUrl: model.url,
    config: {
      replicas: { leaseTtl: '2s' },
      channels: { telegram: { accounts: { main: telegramAccount(tg, { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] }) } } },
    },
  });
});

afterAll(async () => {
  await replicas?.close();
  await stopAllGateways();
  await tg?.close();
  await model?.close();
  await pg?.destroy();
});

describe('replicas: failover of a running Telegram turn (acceptance 2)', () => {
  it('kill -9 of the replica streaming a reply: another replica resumes the turn after the lease lapsed; exactly one final, no chunk posted twice', async () => {
    const chat = ALICE.dm.id;
    model.enqueue({ text: 'A long answer that is streamed slowly and will be cut off by a crash.', holdAfterEvents: 5 });
    const since = replicas.mark();
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'tell me something long' });
    const draft = await replicas.waitForLog((l) => l.includes('telegram_draft_recorded'), { since, timeoutMs: 30_000 });
    const turnId = String((JSON.parse(draft.line) as { turnId?: unknown }).turnId);
    // One message so far: the plain-text draft.
    expect(tg.calls.filter((c) => c.method === 'sendMessage' && params(c).chat_id === chat)).toHaveLength(1);
    const afterKill = replicas.mark();
    await replicas.kill(draft.index);
    model.release();

    const finished = await replicas.waitForLog((l) => l.includes('"turn finished"') && l.includes(turnId), { since: afterKill, timeoutMs: 30_000 });
    expect(finished.index).not.toBe(draft.index);
    await waitForText(tg, chat, 'echo: tell me something long', 20_000);
    // The session keeps working on the replicas that are left.
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'are you there?' });
    await waitForText(tg, chat, 'echo: are you there?', 30_000);

    const visible = tg.sent(TOKEN, chat);
    const all = tg.sent(TOKEN, chat, { includeDeleted: true });
    // The half-streamed draft became the answer (edited in place), or was deleted and replaced.
    expect(visible.map((m) => m.text)).toEqual(['echo: tell me something long', 'echo: are you there?']);
    expect(all.length - visible.length).toBeLessThanOrEqual(1);
    // Nothing was posted twice: one message per turn (the resumed turn edited the draft the dead
    // replica had recorded), and no successful send or edit carries another copy of either answer.
    const ok = tg.calls.filter((c) => params(c).chat_id === chat && c.status === 200);
    expect(ok.filter((c) => c.method === 'sendMessage')).toHaveLength(2);
    const draftId = (ok.find((c) => c.method === 'sendMessage')?.response as { result?: { message_id?: number } } | undefined)?.result?.message_id;
    for (const edit of ok.filter((c) => c.method === 'editMessageText')) expect(params(edit).message_id).toBe(draftId);
    expect(ok.filter((c) => String(params(c).text).includes('are you there?'))).toHaveLength(1);
    const rows = await storeRows<{ state: string; finals: number }>(
      replicas.at(finished.index),
      `SELECT t.state, (SELECT count(*) FROM deliveries d WHERE d.turn_id = t.id AND d.kind = 'final') AS finals FROM turns t WHERE t.id = ?`,
      [turnId],
    );
    expect(rows).toEqual([{ state: 'completed', finals: 1 }]);
  });
});
