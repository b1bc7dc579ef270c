import { createPgDb, type PgDb } from '@switchboard/store';
import {
  api,
  connectWs,
  type FakeAnthropic,
  type FakeTelegram,
  type PgServer,
  type Replicas,
  startFakeAnthropic,
  startFakeTelegram,
  startPostgres,
  startReplicas,
  stopAllGateways,
  type WsClient,
} from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, BOT_USERNAME, params, telegramAccount, TOKEN } from './telegram-helpers.js';

// Acceptance 5 of issue 20: a rolling restart of three replicas (SIGTERM one at a time, each back
// before the next) while three people chat over WebSocket through the round-robin proxy and one
// over Telegram (polled by whichever replica holds receiver:telegram:main). No message is lost or
// answered twice: every message gets exactly one turn, one final, one model answer.
let pg: PgServer;
let db: PgDb;
let model: FakeAnthropic;
let tg: FakeTelegram;
let replicas: Replicas;

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
      // These people chat as fast as they are answered; the rate limits have tests of their own.
      channels: {
        websocket: { accounts: { default: { rateLimit: { burst: 1000, perMinute: 6000 } } } },
        telegram: {
          accounts: { main: telegramAccount(tg, { dmPolicy: 'allowlist', allowFrom: [String(ALICE.user.id)], rateLimit: { burst: 1000, perMinute: 6000 } }) },
        },
      },
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

/** A person with a client token, made through the proxy (any replica). */
async function person(name: string): Promise<{ name: string; token: string }> {
  const op = replicas.credentials().operatorToken;
  const p = await api({ url: replicas.url }, 'POST', '/api/v1/principals', { token: op, body: { name, role: 'member' } });
  expect(p.status).toBe(201);
  const t = await api({ url: replicas.url }, 'POST', '/api/v1/tokens', { token: op, body: { kind: 'client', principalId: p.json.principal.id } });
  expect(t.status).toBe(201);
  return { name, token: t.json.secret as string };
}

/** Connects through the proxy; a replica that is shutting down refuses the upgrade, and the proxy's next one is tried. */
async function connect(token: string): Promise<WsClient> {
  const errors: string[] = [];
  for (let attempt = 0; attempt < 30; attempt++) {
    try {
      const ws = await connectWs(replicas.wsUrl, { headers: { authorization: `Bearer ${token}` } });
      await ws.next((f) => f.type === 'hello_ok');
      return ws;
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  throw new Error(`could not connect through the proxy:\n${errors.join('\n')}`);
}

/** What one WebSocket person saw: the final frames per client id. */
type Seen = Map<string, Array<{ turnId: string; text: string }>>;

/**
 * Chats until `done()` (and at least `min` messages): one message at a time, waiting for its
 * final. A socket closed by a replica's shutdown, or a `shutting_down` refusal, makes the client
 * reconnect through the proxy and send the same message with the same client id again — what a
 * real client does; the inbox's unique key makes that safe.
 */
async function converse(who: { name: string; token: string }, min: number, done: () => boolean): Promise<{ sent: number; seen: Seen; reconnects: number }> {
  const seen: Seen = new Map();
  let ws = await connect(who.token);
  let reconnects = 0;
  let sent = 0;
  for (let i = 0; i < min || !done(); i++) {
    const clientId = `${who.name}-${i}`;
    const text = `${who.name} says ${i}`;
    sent++;
    for (;;) {
      try {
        ws.send({ type: 'message', clientId, text });
        const f = await ws.next((x) => x.clientId === clientId && (x.type === 'final' || x.type === 'error'), 60_000);
        if (f.type === 'final') {
          const list = seen.get(clientId) ?? [];
          list.push({ turnId: f.turnId as string, text: f.text as string });
          seen.set(clientId, list);
          break;
        }
        if (f.code !== 'shutting_down' && f.code !== 'storage_unavailable') throw new Error(`unexpected error frame ${JSON.stringify(f)}`);
      } catch (err) {
        if (err instanceof Error && err.message.startsWith('unexpected error frame')) throw err;
      }
      await ws.close().catch(() => undefined);
      ws = await connect(who.token);
      reconnects++;
    }
  }
  await ws.close();
  return { sent, seen, reconnects };
}

/** Alice chats on Telegram until `done()` (and at least `min` messages), one message per final. */
async function telegramChat(min: number, done: () => boolean): Promise<number> {
  let n = 0;
  for (; n < min || !done(); n++) {
    tg.sendUserMessage(TOKEN, { chat: ALICE.dm, from: ALICE.user, text: `alice says ${n}` });
    await tg.waitForAnswered(
      (c) =>
        (c.method === 'sendMessage' || c.method === 'editMessageText') &&
        params(c).chat_id === ALICE.dm.id &&
        params(c).parse_mode === 'HTML' &&
        params(c).text === `echo: alice says ${n}`,
      60_000,
    );
  }
  return n;
}

describe('rolling restart of three replicas while people chat (issue 20, acceptance 5)', () => {
  it('SIGTERM one replica at a time, each back before the next: no message lost or answered twice', async () => {
    const people = await Promise.all(['ada', 'bo', 'cy'].map((n) => person(n)));
    let rolled = false;
    const chats = Promise.all([...people.map((p) => converse(p, 3, () => rolled)), telegramChat(3, () => rolled)]);
    const exits: Array<number | null> = [];
    const pollers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const mark = replicas.mark();
      exits.push((await replicas.stop(i)).code);
      await replicas.restart(i);
      // Someone polls Telegram after each step (the stopped replica handed it over if it held it).
      const view = await api({ url: replicas.url }, 'GET', '/api/v1/replicas', { token: replicas.credentials().operatorToken });
      pollers.push(
        (view.json.replicas as Array<{ id: string; holds: Array<{ name: string }> }>).find((r) => r.holds.some((h) => h.name === 'receiver:telegram:main'))
          ?.id ?? `none (${JSON.stringify(view.json)}; mark ${mark.size})`,
      );
    }
    rolled = true;
    const [ada, bo, cy, alice] = (await chats) as [
      Awaited<ReturnType<typeof converse>>,
      Awaited<ReturnType<typeof converse>>,
      Awaited<ReturnType<typeof converse>>,
      number,
    ];
    expect(exits).toEqual([0, 0, 0]);
    expect(pollers.every((p) => p.startsWith('replica-'))).toBe(true);
    // The restarts hit the chats: every socket was closed under its person at least once, and the poll moved.
    for (const r of [ada, bo, cy]) expect(r.reconnects).toBeGreaterThanOrEqual(1);
    expect(new Set(pollers).size).toBeGreaterThanOrEqual(2);

    // Every WebSocket message: answered, by one turn (a re-send after a reconnect names the same turn).
    for (const r of [ada, bo, cy]) {
      expect(r.seen.size).toBe(r.sent);
      for (const [clientId, finals] of r.seen) {
        expect(new Set(finals.map((f) => f.turnId)).size, clientId).toBe(1);
        expect(finals[0]?.text).toBe(`echo: ${clientId.replace(/-(\d+)$/, ' says $1')}`);
      }
    }
    // Every Telegram message answered once (finals are edits of drafts or sends: count the visible messages).
    const shown = tg.sent(TOKEN, ALICE.dm.id).map((m) => m.text ?? '');
    for (let n = 0; n < alice; n++)
      expect(
        shown.filter((t) => t === `echo: alice says ${n}`),
        `alice says ${n}`,
      ).toHaveLength(1);

    // An answer is sent just before its turn is marked completed: wait for the last ones' lines.
    const open = await db.rows<{ id: string }>(`SELECT id FROM turns WHERE state <> 'completed'`);
    for (const t of open) await replicas.waitForLog((l) => l.includes(`"turnId":"${t.id}"`) && l.includes('"state":"completed"'));
    // In the shared database: one inbox row and one completed turn per message, one final part each.
    const total = ada.sent + bo.sent + cy.sent + alice;
    const rows = await db.rows<{ turns: number; done: number; finals: number }>(
      `SELECT count(DISTINCT t.id)::int AS turns,
              count(DISTINCT t.id) FILTER (WHERE t.state = 'completed')::int AS done,
              count(d.*) FILTER (WHERE d.kind = 'final')::int AS finals
         FROM inbox i LEFT JOIN turns t ON t.inbox_id = i.id LEFT JOIN deliveries d ON d.turn_id = t.id
        WHERE i.failed_at IS NULL GROUP BY i.id`,
    );
    expect(rows).toHaveLength(total);
    expect(rows.filter((r) => r.turns !== 1 || r.done !== 1 || r.finals < 1)).toEqual([]);
    // One model answer per message: a turn never ran twice.
    expect(model.requests.length).toBe(total);
  });
});
