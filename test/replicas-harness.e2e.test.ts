import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropic, type PgServer, type Replicas, startFakeAnthropic, startPostgres, startReplicas, stopAllGateways } from '@switchboard/testkit';
import { chat, connectClient } from './helpers.js';
import { connectWs } from '@switchboard/testkit';

// The multi-replica harness itself: three real gateways on one PostgreSQL database behind the
// round-robin proxy; a crash takes a replica out of the rotation, a restart puts it back.
let pg: PgServer;
let fake: FakeAnthropic;
let replicas: Replicas;

beforeAll(async () => {
  pg = await startPostgres();
  fake = await startFakeAnthropic();
  replicas = await startReplicas({ count: 3, pg: await pg.createDatabase(), modelUrl: fake.url });
});

afterAll(async () => {
  await replicas?.close();
  await stopAllGateways();
  await fake?.close();
  await pg?.destroy();
});

describe('startReplicas', () => {
  it('runs three gateways on one database: a token made on the first works on every replica and through the proxy', async () => {
    const { operatorToken } = replicas.credentials();
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${replicas.at(i).url}/api/v1/principals`, { headers: { authorization: `Bearer ${operatorToken}` } });
      expect(r.status).toBe(200);
    }
    for (let i = 0; i < 3; i++) expect((await replicas.readyz(i)).status).toBe(200);
    const before = replicas.proxy.routed();
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${replicas.url}/healthz`, { headers: { connection: 'close' } });
      expect(r.status).toBe(200);
    }
    const after = replicas.proxy.routed();
    expect(after.map((n, i) => n - (before[i] ?? 0))).toEqual([1, 1, 1]);
    expect(new Set([0, 1, 2].map((i) => replicas.replicaId(i))).size).toBe(3);
  });

  it('proxies WebSocket chats: each client lands on the next replica and is answered', async () => {
    fake.enqueue({ text: 'one' }, { text: 'two' }, { text: 'three' });
    const before = replicas.proxy.routed();
    const token = replicas.credentials().clientToken;
    for (const [i, want] of ['one', 'two', 'three'].entries()) {
      const ws = await connectWs(replicas.wsUrl, { headers: { authorization: `Bearer ${token}` } });
      await ws.next((f) => f.type === 'hello_ok');
      const turn = await chat(ws, `c${i}`, `hello ${i}`);
      expect(turn.end.type).toBe('final');
      expect(turn.end.text).toBe(want);
      ws.close();
    }
    expect(replicas.proxy.routed().map((n, i) => n - (before[i] ?? 0))).toEqual([1, 1, 1]);
  });

  it('a killed replica leaves the rotation; restarted under a new replica id, it is back', async () => {
    const oldId = replicas.replicaId(1);
    const exit = await replicas.kill(1);
    expect(exit.signal).toBe('SIGKILL');
    const before = replicas.proxy.routed();
    for (let i = 0; i < 4; i++) expect((await fetch(`${replicas.url}/healthz`, { headers: { connection: 'close' } })).status).toBe(200);
    expect(replicas.proxy.routed()[1]).toBe(before[1]);
    const gw = await replicas.restart(1);
    expect(replicas.replicaId(1)).not.toBe(oldId);
    const ws = await connectClient(gw, replicas.credentials().clientToken);
    fake.enqueue({ text: 'back' });
    expect((await chat(ws, 'back', 'are you there?')).end.text).toBe('back');
    ws.close();
  });
});
