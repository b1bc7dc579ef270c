import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropic, type PgServer, type Replicas, startFakeAnthropic, startPostgres, startReplicas, stopAllGateways } from '@switchboard/testkit';
import { chat, connectClient, isEnd } from './helpers.js';
import { storeRows } from './store-rows.js';

// Issue 20, acceptance 1 across one session: the same person with a WebSocket client on each of
// three replicas chats from all of them at once. Their messages share one session, so its turns
// run one at a time under its lease on whichever replica holds it, and the fan-out brings each
// answer to the client that asked, on its own replica.
let pg: PgServer;
let fake: FakeAnthropic;
let replicas: Replicas;

beforeAll(async () => {
  pg = await startPostgres();
  fake = await startFakeAnthropic();
  replicas = await startReplicas({ count: 3, pg: await pg.createDatabase(), modelUrl: fake.url, config: { replicas: { leaseTtl: '2s' } } });
});

afterAll(async () => {
  await replicas?.close();
  await stopAllGateways();
  await fake?.close();
  await pg?.destroy();
});

describe('replicas: one session, clients on three replicas (acceptance 1)', () => {
  it('every message is answered exactly once, to the client that sent it, and the session transcript keeps each turn whole', async () => {
    const token = replicas.credentials().clientToken;
    const clients = await Promise.all([0, 1, 2].map((i) => connectClient(replicas.at(i), token)));
    const rounds = 3;
    const answers = await Promise.all(
      clients.map(async (ws, i) => {
        const out: Array<{ clientId: string; text: unknown; turnId: unknown }> = [];
        for (let n = 0; n < rounds; n++) {
          const turn = await chat(ws, `s${i}-m${n}`, `shared ${i} message ${n}`, 30_000);
          out.push({ clientId: `s${i}-m${n}`, text: turn.end.text, turnId: turn.end.turnId });
        }
        return out;
      }),
    );
    for (const [i, list] of answers.entries()) {
      expect(list.map((a) => a.text)).toEqual(Array.from({ length: rounds }, (_, n) => `echo: shared ${i} message ${n}`));
      for (const a of list) expect(clients[i]!.frames.filter((f) => isEnd(f) && f.clientId === a.clientId)).toHaveLength(1);
    }
    const turnIds = answers.flat().map((a) => String(a.turnId));
    const turns = await storeRows<{ session_id: string; state: string }>(
      replicas.at(0),
      `SELECT session_id, state FROM turns WHERE id IN (${turnIds.map(() => '?').join(', ')})`,
      turnIds,
    );
    expect(new Set(turns.map((t) => t.session_id)).size).toBe(1);
    const entries = await storeRows<{ turn_id: string; kind: string }>(replicas.at(0), 'SELECT turn_id, kind FROM entries WHERE session_id = ? ORDER BY seq', [
      turns[0]!.session_id,
    ]);
    const ours = new Set(turnIds);
    const order = entries.filter((e) => ours.has(e.turn_id));
    expect(order).toHaveLength(turnIds.length * 2);
    for (let i = 0; i < order.length; i += 2) {
      expect([order[i]!.kind, order[i + 1]!.kind]).toEqual(['user', 'assistant']);
      expect(order[i + 1]!.turn_id).toBe(order[i]!.turn_id);
    }
    for (const ws of clients) ws.close();
  });
});
