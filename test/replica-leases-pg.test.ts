import { EventEmitter, once } from 'node:events';
import type { ExclusiveReceiver } from '@switchboard/core';
import { acquireLease, createPgDb, listLeases, migratePostgres, type PgDb, releaseLease, renewLease } from '@switchboard/store';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LeaseOps, ReplicaLeases } from '../apps/gateway/src/replica-leases.js';
import { viewOf } from '../apps/gateway/src/wiring/replicas.js';

// Receiver leases on a real PostgreSQL: one replica receives per account, a graceful hand-off
// passes it on at once, a replica cut off from the database stops receiving before another may
// take over, and a taken lease stops its old holder.
const TTL = 2000;
let server: PgServer;
let db: PgDb;

/** Every resume and pause of every replica's receiver, in order. */
const timeline: string[] = [];
const events = new EventEmitter();

function recorder(replica: string): ExclusiveReceiver {
  return {
    resume: () => {
      timeline.push(`${replica}:resume`);
      events.emit('change', `${replica}:resume`);
    },
    pause: async () => {
      timeline.push(`${replica}:pause`);
      events.emit('change', `${replica}:pause`);
    },
  };
}

async function waitFor(entry: string): Promise<void> {
  while (!timeline.includes(entry)) await once(events, 'change');
}

/** The database's lease operations, with a switch that makes them fail like an unreachable server. */
function ops(): LeaseOps & { cut: boolean } {
  const o = {
    cut: false,
    acquire: (name: string, owner: string, ttl: number) => (o.cut ? Promise.reject(new Error('connection refused')) : acquireLease(db, name, owner, ttl)),
    renew: (lease: Parameters<LeaseOps['renew']>[0], ttl: number) => (o.cut ? Promise.reject(new Error('connection refused')) : renewLease(db, lease, ttl)),
    release: (lease: Parameters<LeaseOps['release']>[0]) => (o.cut ? Promise.reject(new Error('connection refused')) : releaseLease(db, lease)),
  };
  return o;
}

function replica(id: string, o = ops(), more: { ttlMs?: number; onReleased?: (name: string) => void } = {}): ReplicaLeases {
  return new ReplicaLeases({
    ops: o,
    replicaId: id,
    ttlMs: more.ttlMs ?? TTL,
    log: pino({ level: 'silent' }),
    receivers: [{ channelId: 'telegram:main', receiver: recorder(id) }],
    ...(more.onReleased ? { onReleased: more.onReleased } : {}),
  });
}

beforeAll(async () => {
  server = await startPostgres();
  db = createPgDb({ url: await server.createDatabase(), max: 6 });
  await migratePostgres(db);
});
afterAll(async () => {
  await db?.pool.end();
  await server?.destroy();
});

describe('receiver leases', () => {
  it('one replica receives; SIGTERM hands over to another at its next tick; the presence goes last', async () => {
    const a = replica('a');
    await a.start();
    expect(timeline).toEqual(['a:resume']);
    const b = replica('b');
    await b.start();
    expect(b.held().map((l) => l.name)).toEqual(['replica:b']);
    let view = viewOf(await listLeases(db), 'b');
    expect(view.replicas.map((r) => [r.id, r.self, r.holds.map((h) => h.name)])).toEqual([
      ['a', false, ['receiver:telegram:main']],
      ['b', true, []],
    ]);

    await a.handOff();
    expect(timeline).toEqual(['a:resume', 'a:pause']);
    await waitFor('b:resume');
    expect(timeline).toEqual(['a:resume', 'a:pause', 'b:resume']);
    view = viewOf(await listLeases(db), 'b');
    expect(view.replicas.find((r) => r.id === 'b')?.holds.map((h) => [h.name, h.fence])).toEqual([['receiver:telegram:main', 2]]);
    expect(view.replicas.map((r) => r.id)).toEqual(['a', 'b']);
    await a.close();
    view = viewOf(await listLeases(db), 'b');
    expect(view.replicas.map((r) => r.id)).toEqual(['b']);
    await b.close();
    expect(viewOf(await listLeases(db), 'x').free.map((f) => [f.name, f.lastOwner])).toEqual([['receiver:telegram:main', 'b']]);
  });

  it('a replica cut off from the database stops receiving before another may take the lease', async () => {
    timeline.length = 0;
    const cutOps = ops();
    const c = replica('c', cutOps);
    await c.start();
    expect(timeline).toEqual(['c:resume']);
    const d = replica('d');
    await d.start();
    cutOps.cut = true;
    await waitFor('d:resume');
    // c gave up after two thirds of the TTL without a renewal; d could take it only once it lapsed.
    expect(timeline).toEqual(['c:resume', 'c:pause', 'd:resume']);
    await c.close();
    await d.close();
  });

  it('a release wakes a standby at once: with a 10-minute lease it does not wait for its next renewal', async () => {
    timeline.length = 0;
    let standby: ReplicaLeases | null = null;
    const released: string[] = [];
    const f = replica('f', ops(), {
      ttlMs: 600_000,
      onReleased: (name) => {
        released.push(name);
        standby?.nudge();
      },
    });
    await f.start();
    standby = replica('g', ops(), { ttlMs: 600_000 });
    await standby.start();
    await f.handOff();
    await waitFor('g:resume');
    expect(released).toEqual(['receiver:telegram:main']);
    expect(timeline).toEqual(['f:resume', 'f:pause', 'g:resume']);
    await f.close();
    await standby.close();
  });

  it('a forged wake-up grants nothing: a standby woken while the lease is held stays a standby', async () => {
    timeline.length = 0;
    const h = replica('h');
    await h.start();
    const s = replica('s');
    await s.start();
    for (let i = 0; i < 5; i++) s.nudge();
    // The nudged ticks ran (their acquire answered null) once the next renewal of s has happened too.
    await s.handOff();
    expect(timeline).toEqual(['h:resume', 's:pause']);
    expect(h.held().map((l) => l.name)).toEqual(['replica:h', 'receiver:telegram:main']);
    await s.close();
    await h.close();
  });

  it('a lease taken from under its holder (it stalled past its expiry) stops that holder at its next renewal', async () => {
    timeline.length = 0;
    const e = replica('e');
    await e.start();
    expect(timeline).toEqual(['e:resume']);
    // What another replica does once e's lease lapsed: take it with the next fence.
    await db.run(`UPDATE leases SET owner = 'intruder', fence = fence + 1 WHERE name = 'receiver:telegram:main'`);
    await waitFor('e:pause');
    expect(e.held().map((l) => l.name)).toEqual(['replica:e']);
    await e.close();
  });
});
