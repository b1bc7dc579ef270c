import { once } from 'node:events';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDb, type PgDb } from '../src/pg/db.js';
import { acquireLease, fenced, LeaseLostError, listLeases, releaseLease, renewLease } from '../src/pg/leases.js';
import { type BusEvent, encodeBusEvent, PgBus, parseBusPayload, publish } from '../src/pg/notify.js';
import { migratePostgres } from '../src/pg/postgres-storage.js';

let server: PgServer;
let db: PgDb;
let url: string;

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

describe('leases', () => {
  it('one owner at a time; re-acquiring keeps the fence; a release hands over with a higher fence', async () => {
    const a = await acquireLease(db, 'session:1', 'replica-a', 5000);
    expect(a).toMatchObject({ owner: 'replica-a', fence: 1 });
    expect(await acquireLease(db, 'session:1', 'replica-b', 5000)).toBeNull();
    const again = await acquireLease(db, 'session:1', 'replica-a', 5000);
    expect(again?.fence).toBe(1);
    if (!a) throw new Error('no lease');
    expect(await renewLease(db, a, 5000)).toMatchObject({ fence: 1 });
    expect(await releaseLease(db, a)).toBe(true);
    const b = await acquireLease(db, 'session:1', 'replica-b', 5000);
    expect(b).toMatchObject({ owner: 'replica-b', fence: 2 });
    // The old holder notices at its next renewal, and its fenced writes fail at once.
    expect(await renewLease(db, a, 5000)).toBeNull();
    await expect(db.tx((q) => fenced(q, a))).rejects.toBeInstanceOf(LeaseLostError);
    if (!b) throw new Error('no lease');
    await expect(db.tx((q) => fenced(q, b))).resolves.toBeUndefined();
    expect((await listLeases(db, 'session:')).map((l) => [l.name, l.owner, l.fence])).toEqual([['session:1', 'replica-b', 2]]);
  });

  it('a lapsed lease can be taken by another owner (server time decides)', async () => {
    const a = await acquireLease(db, 'poll:telegram:main', 'replica-a', 250);
    expect(a?.fence).toBe(1);
    // Wait for the lapse by watching the row, not the clock.
    let b = await acquireLease(db, 'poll:telegram:main', 'replica-b', 5000);
    while (!b) {
      await new Promise((r) => setTimeout(r, 50));
      b = await acquireLease(db, 'poll:telegram:main', 'replica-b', 5000);
    }
    expect(b).toMatchObject({ owner: 'replica-b', fence: 2 });
  });

  it('ten replicas racing for one lease: exactly one wins', async () => {
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) => acquireLease(db, 'race', `r${i}`, 5000)));
    expect(got.filter((l) => l !== null)).toHaveLength(1);
  });

  it("a released (lapsed) lease fails its holder's fenced writes at once", async () => {
    const a = await acquireLease(db, 'session:2', 'replica-a', 5000);
    if (!a) throw new Error('no lease');
    await releaseLease(db, a);
    // a's lease lapsed: its fenced write must fail even before b takes it.
    await expect(db.tx((q) => fenced(q, a))).rejects.toThrow(/no longer held/);
  });
});

describe('LISTEN/NOTIFY bus', () => {
  it('delivers an event to every listener, and refuses content-sized payloads', async () => {
    const one = new PgBus({ url });
    const two = new PgBus({ url });
    await one.start();
    await two.start();
    try {
      const got = Promise.all([once(one, 'event'), once(two, 'event')]);
      await publish(db, 'switchboard', { topic: 'turn.final', from: 'replica-a', turnId: 't1' });
      const [[e1], [e2]] = (await got) as [[BusEvent], [BusEvent]];
      expect(e1).toEqual({ topic: 'turn.final', from: 'replica-a', turnId: 't1' });
      expect(e2).toEqual(e1);
      expect(() => encodeBusEvent({ topic: 'x', from: 'r', text: 'a'.repeat(8000) })).toThrow(/send ids, not content/);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('an event published in a transaction arrives at commit, and not at all after a rollback', async () => {
    const bus = new PgBus({ url });
    await bus.start();
    try {
      const seen: BusEvent[] = [];
      bus.on('event', (e: BusEvent) => seen.push(e));
      await expect(
        db.tx(async (q) => {
          await publish(q, 'switchboard', { topic: 'rolled-back', from: 'r' });
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      const next = once(bus, 'event');
      await db.tx((q) => publish(q, 'switchboard', { topic: 'committed', from: 'r' }));
      await next;
      expect(seen.map((e) => e.topic)).toEqual(['committed']);
    } finally {
      await bus.close();
    }
  });

  it('reconnects after the server restarts and says so (resync), then delivers again', async () => {
    const bus = new PgBus({ url, reconnectDelay: 200 });
    await bus.start();
    try {
      const down = once(bus, 'down');
      await server.stop();
      await down;
      expect(bus.up).toBe(false);
      const resync = once(bus, 'resync');
      await server.start();
      await resync;
      expect(bus.up).toBe(true);
      const next = once(bus, 'event');
      // The pool's old connections died with the server; a fresh query reconnects.
      await publish(db, 'switchboard', { topic: 'after', from: 'r' });
      expect(((await next) as [BusEvent])[0].topic).toBe('after');
    } finally {
      await bus.close();
    }
  });

  it('parseBusPayload never throws and only returns flat events with a topic and a sender', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.anything().map((v) => JSON.stringify(v) ?? ''),
        ),
        (s) => {
          const e = parseBusPayload(s);
          if (e === null) return;
          expect(typeof e.topic).toBe('string');
          expect(typeof e.from).toBe('string');
          for (const v of Object.values(e)) expect(v === null || ['string', 'number', 'boolean'].includes(typeof v)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
    expect(parseBusPayload('{"topic":"x","from":"r","__proto__":{"polluted":1}}')).toBeNull();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(parseBusPayload(undefined)).toBeNull();
    expect(parseBusPayload('{"topic":"x","from":"r","n":{"a":1}}')).toBeNull();
  });
});
