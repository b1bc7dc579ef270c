import { once } from 'node:events';
import type { ReplicaSignal } from '@switchboard/core';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgFanoutHub } from '../src/pg/channel-fanout.js';
import { pgConsoleSessions } from '../src/pg/console-session-repo.js';
import { createPgDb, type PgDb } from '../src/pg/db.js';
import { PgBus } from '../src/pg/notify.js';
import { migratePostgres } from '../src/pg/postgres-storage.js';
import { PgReplicaBus } from '../src/pg/replica-bus.js';
import { pgSharedMarks } from '../src/pg/shared-marks.js';
import { pgSlotPool } from '../src/pg/shared-slots.js';

// Issue 20: what replicas tell each other (PgReplicaBus), the frames they stage for each other's
// viewers (PgFanoutHub), and the marks and console sessions they share.

let server: PgServer;
let db: PgDb;
let url: string;
const warnings: unknown[] = [];
const log = { warn: (obj: object) => void warnings.push(obj) };

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  db = createPgDb({ url, max: 12 });
  await migratePostgres(db);
});
afterAll(async () => {
  await db?.pool.end();
  await server?.destroy();
});

/** Resolves with the next `n` values `subscribe` hands its callback. */
function collect<T>(n: number, subscribe: (push: (v: T) => void) => void): Promise<T[]> {
  return new Promise((resolve) => {
    const got: T[] = [];
    subscribe((v) => {
      got.push(v);
      if (got.length === n) resolve(got);
    });
  });
}

/** Kills the bus's listening connections from the server side (as a network drop would). */
async function dropListeners(): Promise<void> {
  await db.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'switchboard-bus' AND pid <> pg_backend_pid()");
}

describe('PgReplicaBus', () => {
  it('delivers signals to the other replicas in publish order, never back to the publisher', async () => {
    const busA = new PgBus({ url, channel: 'swb_bus_order' });
    const busB = new PgBus({ url, channel: 'swb_bus_order' });
    await busA.start();
    await busB.start();
    try {
      const a = new PgReplicaBus({ db, bus: busA, replicaId: 'a', log });
      const b = new PgReplicaBus({ db, bus: busB, replicaId: 'b', log });
      const echoed: ReplicaSignal[] = [];
      a.on('approval_settled', (s) => echoed.push(s));
      const got = collect<ReplicaSignal>(20, (push) => b.on('approval_settled', push));
      for (let i = 0; i < 20; i++) a.publish({ topic: 'approval_settled', approvalId: `ap-${i}` });
      expect((await got).map((s) => s.approvalId)).toEqual(Array.from({ length: 20 }, (_, i) => `ap-${i}`));
      // b's own publish reaches a; a's never came back to a.
      const back = collect<ReplicaSignal>(1, (push) => a.on('approval_settled', push));
      b.publish({ topic: 'approval_settled', approvalId: 'from-b' });
      expect((await back)[0]).toMatchObject({ topic: 'approval_settled', approvalId: 'from-b' });
      expect(echoed.map((s) => s.approvalId)).toEqual(['from-b']);
      expect((await back)[0]).not.toHaveProperty('from');
    } finally {
      await busA.close();
      await busB.close();
    }
  });

  it('calls the resync handlers once the listening connection is back after a drop', async () => {
    const bus = new PgBus({ url, channel: 'swb_bus_resync', reconnectDelay: 200 });
    await bus.start();
    try {
      const r = new PgReplicaBus({ db, bus, replicaId: 'r', log });
      const resynced = collect<true>(1, (push) => r.onResync(() => push(true)));
      await dropListeners();
      expect(await resynced).toEqual([true]);
    } finally {
      await bus.close();
    }
  });
});

describe('PgFanoutHub', () => {
  async function pair(channel: string, retentionMs = 60_000) {
    const busA = new PgBus({ url, channel, reconnectDelay: 200 });
    const busB = new PgBus({ url, channel, reconnectDelay: 200 });
    await busA.start();
    await busB.start();
    const a = new PgFanoutHub({ db, bus: busA, replicaId: `${channel}-a`, retentionMs, log });
    const b = new PgFanoutHub({ db, bus: busB, replicaId: `${channel}-b`, retentionMs, log });
    await a.start();
    await b.start();
    return { a, b, busA, busB, close: () => Promise.all([busA.close(), busB.close()]) };
  }

  it('hands frames to the same channel on the other replica, in order, once, with their audience; other channels and the sender get nothing', async () => {
    const { a, b, close } = await pair('swb_fan_order');
    try {
      const mine: unknown[] = [];
      a.forChannel('websocket:default').onFrames((_who, f) => mine.push(...f));
      const other: unknown[] = [];
      b.forChannel('websocket:other').onFrames((_who, f) => other.push(...f));
      const got = collect<[string, unknown]>(300, (push) =>
        b.forChannel('websocket:default').onFrames((who, f) => {
          for (const x of f) push([who, x]);
        }),
      );
      const sendA = a.forChannel('websocket:default');
      // Many sends in a burst: they go out in a few flushes, never out of order.
      for (let i = 0; i < 300; i++) sendA.send(i % 2 === 0 ? 'p-even' : 'p-odd', [{ type: 'delta', text: `d${i}` }]);
      const frames = await got;
      expect(frames.map(([, f]) => (f as { text: string }).text)).toEqual(Array.from({ length: 300 }, (_, i) => `d${i}`));
      expect(frames.every(([who, f]) => who === (Number((f as { text: string }).text.slice(1)) % 2 === 0 ? 'p-even' : 'p-odd'))).toBe(true);
      await a.flushed();
      // One row per send; the announcements named id ranges only.
      const rows = await db.rows<{ n: number }>("SELECT count(*)::int AS n FROM fanout_frames WHERE origin = 'swb_fan_order-a'");
      expect(rows[0]!.n).toBe(300);
      expect(mine).toEqual([]);
      expect(other).toEqual([]);
    } finally {
      await close();
    }
  });

  it('after a dropped listening connection, the frames staged meanwhile are read from the table and delivered once', async () => {
    const { a, b, busB, close } = await pair('swb_fan_gap');
    try {
      const got: string[] = [];
      b.forChannel('websocket:default').onFrames((_who, f) => {
        for (const x of f) got.push((x as { text: string }).text);
      });
      const down = once(busB, 'down');
      await dropListeners();
      await down;
      // Staged while B cannot hear the announcements.
      const sendA = a.forChannel('websocket:default');
      for (let i = 0; i < 5; i++) sendA.send('p', [{ type: 'delta', text: `gap${i}` }]);
      await a.flushed();
      const back = once(busB, 'resync');
      await back;
      // Then live again; a marker sent after the resync arrives after the replayed ones.
      const done = collect<string>(1, (push) =>
        b.forChannel('websocket:default').onFrames((_who, f) => {
          if (f.some((x) => (x as { text: string }).text === 'after')) push('after');
        }),
      );
      sendA.send('p', [{ type: 'delta', text: 'after' }]);
      await done;
      expect(got.filter((t) => t.startsWith('gap'))).toEqual(['gap0', 'gap1', 'gap2', 'gap3', 'gap4']);
      expect(got.at(-1)).toBe('after');
    } finally {
      await close();
    }
  });

  it('deletes staged rows older than the retention when it next writes', async () => {
    const { a, close } = await pair('swb_fan_prune', 1000);
    try {
      await db.run(
        "INSERT INTO fanout_frames (origin, channel, audience, frames, created_at) VALUES ('old', 'websocket:default', 'p', '[]', (extract(epoch from clock_timestamp()) * 1000)::bigint - 5000)",
      );
      a.forChannel('websocket:default').send('p', [{ type: 'notice', text: 'n' }]);
      await a.flushed();
      expect(await db.rows("SELECT id FROM fanout_frames WHERE origin = 'old'")).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe('pgSharedMarks', () => {
  it('of ten replicas putting one key at once exactly one creates it; the others read its value', async () => {
    const marks = pgSharedMarks(db);
    const exp = Date.now() + 60_000;
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) => marks.put('race-key', `v${i}`, exp)));
    const created = got.filter((r) => r.created);
    expect(created).toHaveLength(1);
    const values = new Set(got.flatMap((r) => (r.created ? [] : [r.value])));
    expect(values.size).toBe(1);
  });

  it('a dead mark is taken over; update changes a live one; forget needs the value it holds', async () => {
    let now = 1_000_000;
    const marks = pgSharedMarks(db, () => now);
    expect(await marks.put('k', 'first', now + 100)).toEqual({ created: true });
    expect(await marks.put('k', 'second', now + 100)).toEqual({ created: false, value: 'first' });
    await marks.update('k', 'answer');
    expect(await marks.put('k', 'third', now + 100)).toEqual({ created: false, value: 'answer' });
    await marks.forget('k', 'pending');
    expect(await marks.put('k', 'fourth', now + 100)).toEqual({ created: false, value: 'answer' });
    now += 101;
    expect(await marks.put('k', 'fifth', now + 100)).toEqual({ created: true });
    await marks.forget('k', 'fifth');
    expect(await marks.put('k', 'sixth', now + 100)).toEqual({ created: true });
  });
});

describe('pgConsoleSessions', () => {
  it('reads a session until it ends, deletes it, and keeps at most maxPerToken per token (newest)', async () => {
    const sessions = pgConsoleSessions(db);
    const now = 5_000_000;
    const row = (hash: string, tokenId = 'tok', expiresAt = now + 1000) => ({ hash, identity: '{}', tokenId, csrfToken: 'c', expiresAt });
    await sessions.put(row('h1'), 2, now);
    expect(await sessions.get('h1', now)).toMatchObject({ hash: 'h1', tokenId: 'tok', expiresAt: now + 1000 });
    expect(await sessions.get('h1', now + 1000)).toBeNull();
    await sessions.put(row('h2'), 2, now + 1);
    await sessions.put(row('h3'), 2, now + 2);
    await sessions.put(row('x1', 'other'), 2, now + 3);
    expect(await sessions.get('h1', now + 3)).toBeNull();
    expect(await sessions.get('h2', now + 3)).not.toBeNull();
    expect(await sessions.get('x1', now + 3)).not.toBeNull();
    await sessions.delete('h2');
    expect(await sessions.get('h2', now + 3)).toBeNull();
  });
});

describe('pgSlotPool', () => {
  it('of ten takes at once with three slots, three win; a release or a lapse frees one; renewing keeps a slot', async () => {
    const a = pgSlotPool(db, { pool: 'race', limit: 3, owner: 'a', ttlMs: 60_000 });
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) => a.tryTake(`s${i}`)));
    expect(got.filter(Boolean)).toHaveLength(3);
    const won = got.flatMap((ok, i) => (ok ? [`s${i}`] : []));
    expect(await a.tryTake('late')).toBe(false);
    await a.release(won[0]!);
    expect(await a.tryTake('late')).toBe(true);
    expect(await a.renew([...won.slice(1), 'late', 'never-held'])).toBe(3);
    // Another replica's short slots lapse on their own (a replica that died).
    const b = pgSlotPool(db, { pool: 'lapse', limit: 1, owner: 'b', ttlMs: 200 });
    const c = pgSlotPool(db, { pool: 'lapse', limit: 1, owner: 'c', ttlMs: 60_000 });
    expect(await b.tryTake('b1')).toBe(true);
    expect(await c.tryTake('c1')).toBe(false);
    while (!(await c.tryTake('c1')));
    expect(await b.renew(['b1'])).toBe(0);
  });
});

describe('transactions when the server ends the connection', () => {
  it('a server shutdown between two statements of a transaction rejects that transaction; nothing is thrown uncaught', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => void uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    let stopped: () => void = () => undefined;
    const serverStopped = new Promise<void>((resolve) => {
      stopped = resolve;
    });
    let began: () => void = () => undefined;
    const inTx = new Promise<void>((resolve) => {
      began = resolve;
    });
    try {
      const run = db.tx(async (q) => {
        await q.run('SELECT 1');
        began();
        // Idle between statements while the server shuts down (it ends every connection).
        await serverStopped;
        await q.run('SELECT 1');
      });
      await inTx;
      await server.stop();
      stopped();
      await expect(run).rejects.toThrow();
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await server.start();
    }
    // The pool carries on with a fresh connection.
    expect(await db.row<{ one: number }>('SELECT 1 AS one')).toEqual({ one: 1 });
  });
});
