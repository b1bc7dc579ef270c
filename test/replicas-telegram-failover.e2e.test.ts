import { createPgDb, type PgDb } from '@switchboard/store';
import {
  api,
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
import { ALICE, BOT_USERNAME, params, telegramAccount, texts, TOKEN } from './telegram-helpers.js';

// Acceptance 3 of issue 20: three replicas on one PostgreSQL, one Telegram bot in polling mode.
// Exactly one replica polls (it holds receiver:telegram:main); kill -9 of that replica lets
// another take the lease once it lapses, and every update is answered exactly once.
let pg: PgServer;
let db: PgDb;
let model: FakeAnthropic;
let tg: FakeTelegram;
let replicas: Replicas;
const LEASE = 'receiver:telegram:main';
const acquired = leaseAcquired(LEASE);

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase();
  model = await startFakeAnthropic();
  tg = await startFakeTelegram({ bots: [{ token: TOKEN, username: BOT_USERNAME, first_name: 'Switchboard' }] });
  replicas = await startReplicas({
    count: 3,
    pg: url,
    modelUrl: model.url,
    config: {
      replicas: { leaseTtl: '2s' },
      channels: { telegram: { accounts: { main: telegramAccount(tg, { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)] }) } } },
    },
  });
  db = createPgDb({ url, max: 2 });
});

afterAll(async () => {
  await db?.pool.end();
  await replicas?.close();
  await stopAllGateways();
  await tg?.close();
  await model?.close();
  await pg?.destroy();
});

/** The model requests whose last user message is `text` (one per turn that asked the model). */
const modelCallsFor = (text: string) =>
  model.requests.filter((r) => {
    const last = (r.body as { messages?: Array<{ role: string; content: unknown }> }).messages?.filter((m) => m.role === 'user').at(-1);
    return JSON.stringify(last?.content ?? '').includes(text);
  }).length;

/**
 * Waits for the final (HTML) answer `text` in Alice's chat: a send, or the edit of the draft (which
 * Telegram answers "message is not modified" when the draft already showed the whole text).
 */
const waitForFinal = (text: string) =>
  tg.waitForAnswered(
    (c) =>
      (c.method === 'sendMessage' || c.method === 'editMessageText') &&
      params(c).chat_id === ALICE.dm.id &&
      params(c).parse_mode === 'HTML' &&
      params(c).text === text,
    30_000,
  );

/** Every answer in Alice's chat, counted by text. */
function answerCounts(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of texts(tg, ALICE.dm.id)) out[t] = (out[t] ?? 0) + 1;
  return out;
}

/**
 * Waits until the turn of Telegram update `key` is logged completed. Its answer is sent just
 * before that: a kill -9 in between leaves the turn unfinished, and the replica that resumes it
 * asks the model again (the ledger keeps the answer single), so a test that kills next waits here.
 */
async function waitCompleted(key: number): Promise<void> {
  const t = await db.row<{ id: string }>(`SELECT t.id FROM turns t JOIN inbox i ON t.inbox_id = i.id WHERE i.channel = 'telegram' AND i.dedupe_key = $1`, [
    String(key),
  ]);
  if (!t) throw new Error(`no turn for update ${key}`);
  await replicas.waitForLog((l) => l.includes(`"turnId":"${t.id}"`) && l.includes('"state":"completed"'));
}

async function holderIndex(): Promise<number> {
  const up = [0, 1, 2].find((i) => replicas.running(i));
  if (up === undefined) throw new Error('no replica is running');
  const view = await api(replicas.at(up), 'GET', '/api/v1/replicas', { token: replicas.credentials().operatorToken });
  expect(view.status).toBe(200);
  const holders = (view.json.replicas as Array<{ id: string; holds: Array<{ name: string }> }>).filter((r) => r.holds.some((h) => h.name === LEASE));
  expect(holders).toHaveLength(1);
  const index = [0, 1, 2].find((i) => replicas.replicaId(i) === holders[0]?.id);
  if (index === undefined) throw new Error(`the holder ${holders[0]?.id} is not a replica of this test`);
  return index;
}

describe('telegram polling across replicas (issue 20, acceptance 3)', () => {
  let holder = -1;

  it('exactly one replica polls; the others stand by and say so; every message is answered once', async () => {
    const { index } = await replicas.waitForLog(acquired);
    holder = index;
    expect(await holderIndex()).toBe(holder);
    const view = await api(replicas.at(holder), 'GET', '/api/v1/replicas', { token: replicas.credentials().operatorToken });
    expect(view.json.replicas.map((r: { id: string }) => r.id).sort()).toEqual([0, 1, 2].map((i) => replicas.replicaId(i)).sort());
    expect(view.json.self).toBe(replicas.replicaId(holder));
    for (let i = 0; i < 3; i++) {
      const r = await replicas.readyz(i);
      expect(r.status).toBe(200);
      const ch = (r.body.channels as Record<string, { state: string; detail: string }>)['telegram:main'];
      const replica = r.body.replica as { id: string; leases: Array<{ name: string }> };
      expect(replica.id).toBe(replicas.replicaId(i));
      if (i === holder) {
        expect(ch?.detail).toMatch(/polling/);
        expect(replica.leases.map((l) => l.name).sort()).toEqual([LEASE, `replica:${replicas.replicaId(i)}`]);
      } else {
        expect(ch).toMatchObject({ state: 'up' });
        expect(ch?.detail).toMatch(/^standby/);
        expect(replica.leases.map((l) => l.name)).toEqual([`replica:${replicas.replicaId(i)}`]);
      }
    }
    // A forged wake-up (any database user may NOTIFY) makes the standbys try, and fail, to take the held lease.
    await db.run(`SELECT pg_notify('switchboard_leases', $1)`, [JSON.stringify({ topic: 'lease_released', from: 'forger', name: LEASE })]);
    for (const n of [1, 2, 3]) tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: `steady ${n}` });
    for (const n of [1, 2, 3]) await waitForFinal(`echo: steady ${n}`);
    expect(answerCounts()).toEqual({ 'echo: steady 1': 1, 'echo: steady 2': 1, 'echo: steady 3': 1 });
    // One poller at a time: Telegram never had to end one poll for another.
    expect(tg.events.filter((e) => e.type === 'poll-conflict')).toEqual([]);
    expect(await holderIndex()).toBe(holder);
    for (const key of [1, 2, 3]) await waitCompleted(key);
  });

  it('kill -9 of the poller: another replica takes the lease; updates sent meanwhile are answered exactly once', async () => {
    const oldId = replicas.replicaId(holder);
    const mark = replicas.mark();
    await replicas.kill(holder);
    // Updates queue at Telegram while nobody polls.
    for (const n of [1, 2, 3]) tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: `meanwhile ${n}` });
    const next = await replicas.waitForLog(acquired, { since: mark, timeoutMs: 30_000 });
    expect(next.index).not.toBe(holder);
    expect(next.line).toContain(`"replica":"${replicas.replicaId(next.index)}"`);
    for (const n of [1, 2, 3]) await waitForFinal(`echo: meanwhile ${n}`);
    const view = await api(replicas.at(next.index), 'GET', '/api/v1/replicas', { token: replicas.credentials().operatorToken });
    const ids = view.json.replicas.map((r: { id: string }) => r.id);
    // The dead replica's presence lapsed with its receiver lease.
    await expect(holderIndex()).resolves.toBe(next.index);
    expect(view.json.replicas.find((r: { id: string }) => r.id === replicas.replicaId(next.index)).holds.map((h: { name: string }) => h.name)).toContain(LEASE);
    expect(ids.includes(oldId) ? 'the dead replica is still listed' : 'gone').toBe('gone');
    holder = next.index;
    for (const key of [4, 5, 6]) await waitCompleted(key);
  });

  it('kill -9 right after the poller fetched an update: whichever replica ends up with it, it is answered once', async () => {
    const since = tg.events.length;
    const mark = replicas.mark();
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'in flight' });
    await tg.waitForEvent((e) => e.type === 'poll-answered' && e.detail !== '0 update(s)', 15_000, since);
    const killed = holder;
    await replicas.kill(killed);
    const next = await replicas.waitForLog(acquired, { since: mark, timeoutMs: 30_000 });
    expect(next.index).not.toBe(killed);
    // The crashed replica comes back (as an operator would restart it): it resumes what it had
    // accepted but not answered, if anything; the update it had not confirmed was fetched again
    // by the new poller and folded by the inbox's unique key.
    await replicas.restart(killed);
    await waitForFinal('echo: in flight');
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: 'afterwards' });
    await waitForFinal('echo: afterwards');
    expect(answerCounts()).toEqual({
      'echo: steady 1': 1,
      'echo: steady 2': 1,
      'echo: steady 3': 1,
      'echo: meanwhile 1': 1,
      'echo: meanwhile 2': 1,
      'echo: meanwhile 3': 1,
      'echo: in flight': 1,
      'echo: afterwards': 1,
    });
    for (const text of ['steady 1', 'meanwhile 1', 'meanwhile 2', 'meanwhile 3', 'afterwards']) expect(modelCallsFor(text)).toBe(1);
    await waitCompleted(8);
    // One inbox row and one completed turn per update in the shared database; the offset is past the last one.
    const rows = await db.rows<{ key: string; turns: number; done: number }>(
      `SELECT i.dedupe_key AS key, count(t.id)::int AS turns, count(t.id) FILTER (WHERE t.state = 'completed')::int AS done
         FROM inbox i LEFT JOIN turns t ON t.inbox_id = i.id WHERE i.channel = 'telegram' AND i.account = 'main' GROUP BY i.dedupe_key ORDER BY i.dedupe_key::int`,
    );
    expect(rows).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ key: String(n), turns: 1, done: 1 })));
    await tg.waitFor((c) => c.method === 'getUpdates' && (c.params as { offset?: number }).offset === 9, 15_000);
    const offset = await db.row<{ value: string }>(`SELECT value FROM cursors WHERE key = 'telegram:main:offset'`);
    expect(Number(offset?.value)).toBe(9);
  });
});
