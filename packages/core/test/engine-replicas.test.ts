import { openPostgresStorage, type PostgresStorage } from '@switchboard/store';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gate, type Harness, harness, RecordingChannel, say, TEST_STAMP } from './engine-fixtures.js';
import type { Step } from '@switchboard/testkit';

// Two turn engines on one PostgreSQL database, each with its own pool: two replicas' session lanes
// (issue 20). Leases are 2 s, renewed at a third of it; the tests wait for events, never for time.
let server: PgServer;
const TEMPLATE = 'sb_engine_replicas_template';
const LEASE = 2000;

beforeAll(async () => {
  server = await startPostgres();
  const s = await openPostgresStorage({ url: await server.createDatabase({ name: TEMPLATE }) });
  await s.close();
});
afterAll(async () => server?.destroy());

const opened: Array<{ h: Harness; raw: PostgresStorage }> = [];

async function replicas(steps: { a: Step[]; b: Step[] }, scan: { a: number; b: number } = { a: 250, b: 250 }) {
  const url = await server.createDatabase({ template: TEMPLATE });
  const make = async (owner: 'a' | 'b') => {
    const raw = await openPostgresStorage({ url, max: 4 });
    const h = harness({ steps: steps[owner], raw, replica: { owner: `replica-${owner}`, leaseTtlMs: LEASE, orphanScanMs: scan[owner] } });
    opened.push({ h, raw });
    await h.engine.resumeAll();
    return h;
  };
  return { a: await make('a'), b: await make('b') };
}

afterAll(async () => {
  for (const { h, raw } of opened) {
    await h.engine.shutdown();
    await raw.close();
  }
});

const settled = async (h: Harness) => expect(await h.engine.drain(60_000)).toBe(true);

describe('session lanes across replicas', () => {
  it('turns of one session run on whichever replica took them, one at a time, each seeing the history the other wrote (the cache is dropped when the lease changes hands)', async () => {
    const { a, b } = await replicas({ a: [say('one'), say('three')], b: [say('two')] });
    const first = await a.send('m1', 'first');
    await settled(a);
    const second = await b.send('m2', 'second');
    expect(second.sessionId).toBe(first.sessionId);
    await settled(b);
    await a.send('m3', 'third');
    await settled(a);
    expect(a.model.requests[1]?.messages).toEqual([
      { role: 'user', content: [TEST_STAMP, { type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'one' }] },
      { role: 'user', content: [TEST_STAMP, { type: 'text', text: 'second' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'two' }] },
      { role: 'user', content: [TEST_STAMP, { type: 'text', text: 'third' }] },
    ]);
    expect((await a.raw.sessions.load(first.sessionId)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(a.engine.heldSessions()).toEqual([]);
    expect(b.engine.heldSessions()).toEqual([]);
  });

  it('a message accepted by one replica while the other runs the session waits for it, and runs after the running turn, on the holder', async () => {
    const held = gate();
    const { a, b } = await replicas({ a: [{ content: [{ type: 'text', text: 'one' }], hold: held.promise }, say('two')], b: [] });
    const first = await a.send('m1', 'first');
    await a.model.requested(1);
    expect(a.engine.heldSessions()).toEqual([first.sessionId]);
    const second = await b.send('m2', 'second');
    // b found the lease taken: its lane stopped without running anything.
    await settled(b);
    expect(b.model.requests).toHaveLength(0);
    held.open();
    await a.channel.nth(2);
    await settled(a);
    expect(RecordingChannel.end(await a.channel.nth(2))?.text).toBe('two');
    expect((await a.raw.turns.get(second.turnId))?.state).toBe('completed');
  });

  it('a replica whose lease lapses mid-stream stops writing; the other resumes the turn after the expiry: one answer, stored once', async () => {
    const held = gate();
    // a's scan is slow, so the session goes to b (a's own scan could take it back just as well).
    const { a, b } = await replicas({ a: [{ content: [{ type: 'text', text: 'from a' }], hold: held.promise }], b: [say('from b')] }, { a: 600_000, b: 250 });
    const { turnId, sessionId } = await a.send('m1', 'hi');
    await a.model.requested(1);
    // What a dead or stalled replica's lease does at its expiry.
    await a.raw.db.run('UPDATE leases SET expires_at = 0 WHERE name = $1', [`session:${sessionId}`]);
    const resumed = await b.channel.nth(1);
    await resumed.done;
    expect(RecordingChannel.end(resumed)?.text).toBe('from b');
    const stopped = await a.channel.nth(1);
    await stopped.done;
    expect(RecordingChannel.end(stopped)).toBeUndefined();
    held.open();
    await settled(a);
    await settled(b);
    expect(await b.raw.turns.get(turnId)).toMatchObject({ state: 'completed' });
    expect((await b.raw.sessions.load(sessionId)).map((e) => [e.kind, e.turnId])).toEqual([
      ['user', turnId],
      ['assistant', turnId],
    ]);
    expect((await b.raw.deliveries.ofTurn(turnId)).map((d) => [d.kind, d.part, d.content.text])).toEqual([['final', 0, 'from b']]);
    expect(a.afterTurn).toEqual([]);
  });

  it('a message whose session lease a dead replica still holds runs once that lease lapsed', async () => {
    // a's scan is slow, so the waiting message stays b's (a's own scan could take it just as well).
    const { a, b } = await replicas({ a: [say('one')], b: [say('two')] }, { a: 600_000, b: 250 });
    const first = await a.send('m1', 'first');
    await settled(a);
    // A replica that died holding the session: nobody renews its lease, which lapses after 2 s.
    expect(await a.raw.sessionLeases.acquire(first.sessionId, 'replica-dead', LEASE)).not.toBeNull();
    const second = await b.send('m2', 'second');
    const render = await b.channel.nth(1);
    await render.done;
    expect(RecordingChannel.end(render)?.text).toBe('two');
    expect(await b.raw.turns.get(second.turnId)).toMatchObject({ state: 'completed' });
    expect(b.model.requests).toHaveLength(1);
  });

  it('shutdown suspends the running turn and releases its lease: another replica resumes it at once', async () => {
    const held = gate();
    const { a, b } = await replicas({ a: [{ content: [{ type: 'text', text: 'from a' }], hold: held.promise }], b: [say('from b')] }, { a: 600_000, b: 250 });
    const { turnId } = await a.send('m1', 'hi');
    await a.model.requested(1);
    await a.engine.shutdown();
    expect(a.engine.heldSessions()).toEqual([]);
    const resumed = await b.channel.nth(1);
    await resumed.done;
    expect(resumed.meta.resumed).toBe(true);
    expect(RecordingChannel.end(resumed)?.text).toBe('from b');
    expect(await b.raw.turns.get(turnId)).toMatchObject({ state: 'completed' });
  });
});
