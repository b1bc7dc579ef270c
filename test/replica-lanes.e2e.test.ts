import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeAnthropic,
  type FakeSlack,
  type PgServer,
  type Replicas,
  startFakeAnthropic,
  startFakeSlack,
  startPostgres,
  startReplicas,
  stopAllGateways,
} from '@switchboard/testkit';
import { bearer, chat, connectClient, isEnd } from './helpers.js';
import { connectWs, type WsClient } from '@switchboard/testkit';
import { httpAccount, messagesWith, slackConfig, slackUrls, waitForMessage } from './slack-helpers.js';
import { storeRows } from './store-rows.js';

// Issue 20, acceptance 1 and 2 (WebSocket and Slack): three gateways on one PostgreSQL behind the
// loopback round-robin proxy; a session's turns run on one replica at a time under its lease
// (`session:<id>`, 2 s here, renewed at a third of it). Tests wait for events, never for time.
let pg: PgServer;
let fake: FakeAnthropic;
let slack: FakeSlack;
let replicas: Replicas;

beforeAll(async () => {
  pg = await startPostgres();
  fake = await startFakeAnthropic();
  slack = await startFakeSlack();
  replicas = await startReplicas({
    count: 3,
    pg: await pg.createDatabase(),
    modelUrl: fake.url,
    config: { ...slackConfig(httpAccount(slack)), replicas: { leaseTtl: '2s' } },
  });
});

afterAll(async () => {
  await replicas?.close();
  await stopAllGateways();
  await slack?.close();
  await fake?.close();
  await pg?.destroy();
});

/** Model requests whose last message is the person's message containing `text` (a later turn carries it in its history). */
const modelCallsFor = (text: string) =>
  fake.requests.filter((r) => {
    const last = r.body.messages?.at(-1);
    const content = typeof last?.content === 'string' ? last.content : (last?.content ?? []).map((b) => String(b.text ?? '')).join(' ');
    return last?.role === 'user' && content.includes(text);
  }).length;

/** A new member with a client token (control API through replica 0: the database is shared), connected to replica `index`. */
async function personOn(index: number, name: string): Promise<{ ws: WsClient }> {
  const token = replicas.credentials().operatorToken;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${replicas.at(0).url}/api/v1${path}`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as Record<string, any>;
  };
  const principal = await post('/principals', { name, role: 'member' });
  const client = await post('/tokens', { kind: 'client', principalId: principal.principal.id, name });
  return { ws: await connectClient(replicas.at(index), String(client.secret)) };
}

describe('replicas: session lanes and inbox dedupe (acceptance 1)', () => {
  it('WebSocket clients on different replicas chat concurrently: every message is answered exactly once', async () => {
    const people = await Promise.all([0, 1, 2].map((i) => personOn(i, `person-${i}`)));
    const rounds = 3;
    const answers = await Promise.all(
      people.map(async ({ ws }, i) => {
        const out: Array<{ clientId: string; text: unknown; turnId: unknown }> = [];
        for (let n = 0; n < rounds; n++) {
          const turn = await chat(ws, `p${i}-m${n}`, `person ${i} message ${n}`);
          out.push({ clientId: `p${i}-m${n}`, text: turn.end.text, turnId: turn.end.turnId });
        }
        return out;
      }),
    );
    for (const [i, list] of answers.entries()) {
      expect(list.map((a) => a.text)).toEqual(Array.from({ length: rounds }, (_, n) => `echo: person ${i} message ${n}`));
      // Exactly one end per message on this connection.
      for (const a of list) expect(people[i]!.ws.frames.filter((f) => isEnd(f) && f.clientId === a.clientId)).toHaveLength(1);
    }
    for (let i = 0; i < 3; i++) for (let n = 0; n < rounds; n++) expect(modelCallsFor(`person ${i} message ${n}`)).toBe(1);
    const turnIds = answers.flat().map((a) => String(a.turnId));
    const finals = await storeRows<{ turn_id: string; n: number }>(
      replicas.at(0),
      `SELECT turn_id, count(*) AS n FROM deliveries WHERE kind = 'final' AND turn_id IN (${turnIds.map(() => '?').join(', ')}) GROUP BY turn_id`,
      turnIds,
    );
    expect(finals.map((r) => r.n)).toEqual(turnIds.map(() => 1));
    const states = await storeRows<{ state: string; n: number }>(
      replicas.at(0),
      `SELECT state, count(*) AS n FROM turns WHERE id IN (${turnIds.map(() => '?').join(', ')}) GROUP BY state`,
      turnIds,
    );
    expect(states).toEqual([{ state: 'completed', n: rounds * 3 }]);
    for (const { ws } of people) ws.close();
  });

  it('the same Slack event delivered to two replicas at once makes one turn and one answer', async () => {
    const ev = slack.events.im({ text: 'answer me once across replicas' });
    const eventId = 'Ev0REPLICAS0001';
    const [a, b] = await Promise.all([
      slack.deliverEvent(slackUrls(replicas.at(0)).events, ev, { eventId }),
      slack.deliverEvent(slackUrls(replicas.at(1)).events, ev, { eventId, retryNum: 1, retryReason: 'http_timeout' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    await waitForMessage(slack, slack.identity.imChannelId, 'echo: answer me once across replicas');
    // A later message in the same session: a second turn of the duplicate would have run before it.
    await slack.deliverEvent(slackUrls(replicas.at(2)).events, slack.events.im({ text: 'and a later one' }));
    await waitForMessage(slack, slack.identity.imChannelId, 'echo: and a later one');
    expect(modelCallsFor('answer me once across replicas')).toBe(1);
    expect(messagesWith(slack, 'echo: answer me once across replicas')).toHaveLength(1);
    const rows = await storeRows<{ n: number }>(replicas.at(2), `SELECT count(*) AS n FROM inbox WHERE channel = 'slack' AND payload LIKE ?`, [
      '%answer me once across replicas%',
    ]);
    expect(rows).toEqual([{ n: 1 }]);
  });
  it('messages of one Slack DM delivered to all three replicas at once run one at a time in one lane: each answered once, turns never interleaved', async () => {
    const texts = Array.from({ length: 6 }, (_, i) => `lane message ${i}`);
    const since = replicas.mark();
    await Promise.all(texts.map((text, i) => slack.deliverEvent(slackUrls(replicas.at(i % 3)).events, slack.events.im({ text }))));
    for (const text of texts) await waitForMessage(slack, slack.identity.imChannelId, `echo: ${text}`);
    for (const text of texts) {
      expect(modelCallsFor(text)).toBe(1);
      expect(messagesWith(slack, `echo: ${text}`)).toHaveLength(1);
    }
    const turns = await storeRows<{ id: string; session_id: string }>(
      replicas.at(0),
      `SELECT t.id, t.session_id FROM turns t JOIN inbox i ON i.turn_id = t.id WHERE i.channel = 'slack' AND i.payload LIKE ?`,
      ['%lane message %'],
    );
    expect(turns).toHaveLength(texts.length);
    expect(new Set(turns.map((t) => t.session_id)).size).toBe(1);
    // The answer is posted before its turn's end is stored: wait for each end.
    for (const t of turns) await replicas.waitForLog((l) => l.includes('"turn finished"') && l.includes(t.id), { since });
    const states = await storeRows<{ state: string }>(
      replicas.at(0),
      `SELECT state FROM turns WHERE id IN (${turns.map(() => '?').join(', ')})`,
      turns.map((t) => t.id),
    );
    expect(states.map((t) => t.state)).toEqual(turns.map(() => 'completed'));
    // One lane: each turn's entries are contiguous in the session's transcript (user, then its answer).
    const entries = await storeRows<{ turn_id: string; kind: string }>(replicas.at(0), `SELECT turn_id, kind FROM entries WHERE session_id = ? ORDER BY seq`, [
      turns[0]!.session_id,
    ]);
    const ours = new Set(turns.map((t) => t.id));
    const order = entries.filter((e) => ours.has(e.turn_id));
    expect(order).toHaveLength(texts.length * 2);
    for (let i = 0; i < order.length; i += 2) {
      expect([order[i]!.kind, order[i + 1]!.kind]).toEqual(['user', 'assistant']);
      expect(order[i + 1]!.turn_id).toBe(order[i]!.turn_id);
    }
  });
});

describe('replicas: failover of a running turn (acceptance 2, WebSocket)', () => {
  it('kill -9 of the replica running a turn held mid-stream: after its lease expires another replica resumes it; one final, nothing answered twice', async () => {
    const ws = await connectClient(replicas.at(0), replicas.credentials().clientToken);
    fake.enqueue({ holdAfterEvents: 4, text: 'This answer is streamed slowly and cut off by a crash.' });
    const requests = fake.requests.length;
    ws.send({ type: 'message', clientId: 'k1', text: 'tell me something long' });
    const accepted = await ws.next((f) => f.type === 'accepted' && f.clientId === 'k1');
    const turnId = String(accepted.turnId);
    await ws.next((f) => f.type === 'delta' && f.clientId === 'k1');
    await fake.waitForRequests(requests + 1);
    const lastCursor = (ws.frames.filter(isEnd).at(-1)?.cursor as number | undefined) ?? 0;
    const since = replicas.mark();
    await replicas.kill(0);
    fake.release();
    expect(ws.frames.filter((f) => isEnd(f) && f.clientId === 'k1')).toHaveLength(0);
    ws.close();

    // Another replica takes the session once the dead one's lease lapsed, and runs the turn to its end.
    const finished = await replicas.waitForLog((l) => l.includes('"turn finished"') && l.includes(turnId), { since, timeoutMs: 30_000 });
    expect(finished.index).not.toBe(0);
    // The person reconnects (through the proxy, to a live replica) and gets exactly one final.
    const ws2 = await connectWs(replicas.wsUrl, { headers: bearer(replicas.credentials().clientToken) });
    await ws2.next((f) => f.type === 'hello_ok');
    ws2.send({ type: 'hello', cursor: lastCursor });
    const ok = await ws2.next((f) => f.type === 'hello_ok' && typeof f.cursor === 'number');
    const replayed = [];
    while ((replayed.at(-1)?.cursor ?? lastCursor) < (ok.cursor as number)) replayed.push(await ws2.next(isEnd));
    expect(replayed.filter((f) => f.clientId === 'k1')).toEqual([expect.objectContaining({ type: 'final', text: 'echo: tell me something long', turnId })]);
    // Re-sending the message is a duplicate of the finished turn: no second model call.
    const calls = fake.requests.length;
    const again = await chat(ws2, 'k1', 'tell me something long');
    expect(again.accepted.duplicate).toBe(true);
    expect(again.end.turnId).toBe(turnId);
    expect(fake.requests.length).toBe(calls);
    const finals = await storeRows<{ n: number }>(replicas.at(finished.index), `SELECT count(*) AS n FROM deliveries WHERE kind = 'final' AND turn_id = ?`, [
      turnId,
    ]);
    expect(finals).toEqual([{ n: 1 }]);
    const entries = await storeRows<{ kind: string }>(replicas.at(finished.index), `SELECT kind FROM entries WHERE turn_id = ? ORDER BY seq`, [turnId]);
    expect(entries.map((e) => e.kind)).toEqual(['user', 'assistant']);
    ws2.close();
  });
});
