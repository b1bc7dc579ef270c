import type { InboundMessage, NewEntry } from '@switchboard/core';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStorage, type PostgresStorage } from '../src/index.js';

// Session leases and fenced transcript writes (issue 20) on a real PostgreSQL server.
let server: PgServer;
const TEMPLATE = 'sb_session_leases_template';

beforeAll(async () => {
  server = await startPostgres();
  const s = await openPostgresStorage({ url: await server.createDatabase({ name: TEMPLATE }) });
  await s.close();
});
afterAll(async () => server?.destroy());

const open = async (): Promise<PostgresStorage> => openPostgresStorage({ url: await server.createDatabase({ template: TEMPLATE }), max: 4 });

function message(dedupeKey: string): InboundMessage {
  return {
    dedupeKey,
    channel: 'websocket',
    account: 'default',
    conversation: { channel: 'websocket', account: 'default', id: 'p1', kind: 'dm' },
    sender: { identity: 'ws:p1', isBot: false },
    kind: 'dm',
    mentioned: false,
    text: 'hi',
    platformId: dedupeKey,
    receivedAt: new Date(0),
    principalId: 'p1',
  };
}

const route = { key: { agent: 'main', channel: 'websocket', account: 'default', scope: 'dm' as const, principalId: 'p1' }, clientId: null };
const say = (turnId: string, text: string): NewEntry => ({ kind: 'assistant', turnId, payload: { content: [{ type: 'text', text }] } });

async function accepted(s: PostgresStorage, key: string): Promise<{ turnId: string; sessionId: string }> {
  const res = await s.turns.accept(message(key), route);
  if (!res.turnId || !res.sessionId) throw new Error('not accepted');
  return { turnId: res.turnId, sessionId: res.sessionId };
}

/** Lets a lease lapse now (what a dead replica's lease does at its expiry). */
const lapse = (s: PostgresStorage, sessionId: string) => s.db.run(`UPDATE leases SET expires_at = 0 WHERE name = $1`, [`session:${sessionId}`]);

describe('session leases on PostgreSQL', () => {
  it('one owner at a time; a take after a lapse bumps the fence; a release hands over at once', async () => {
    const s = await open();
    const leases = s.sessionLeases;
    const a = await leases.acquire('s1', 'replica-a', 60_000);
    expect(a).toMatchObject({ name: 'session:s1', owner: 'replica-a' });
    expect(await leases.acquire('s1', 'replica-b', 60_000)).toBeNull();
    expect(await leases.renew(a!, 60_000)).toEqual(a);
    await lapse(s, 's1');
    expect(await leases.renew(a!, 60_000)).toBeNull();
    const b = await leases.acquire('s1', 'replica-b', 60_000);
    expect(b?.fence).toBe(a!.fence + 1);
    await leases.release(b!);
    const again = await leases.acquire('s1', 'replica-a', 60_000);
    expect(again?.fence).toBe(b!.fence + 1);
    await s.close();
  });

  it('a replica whose lease was taken can no longer append to the session: every fenced write is refused and writes nothing', async () => {
    const s = await open();
    const { turnId, sessionId } = await accepted(s, 'm1');
    const second = await accepted(s, 'm2');
    const a = (await s.sessionLeases.acquire(sessionId, 'replica-a', 60_000))!;
    await s.turns.begin(turnId, [{ kind: 'user', turnId, payload: { content: [{ type: 'text', text: 'hi' }] } }], [], a);
    await lapse(s, sessionId);
    const b = (await s.sessionLeases.acquire(sessionId, 'replica-b', 60_000))!;
    const lost = { code: 'SWB_E_LEASE_LOST' };
    await expect(s.turns.append(turnId, [say(turnId, 'late')], [], a)).rejects.toMatchObject(lost);
    await expect(s.turns.finish(turnId, { state: 'completed', entries: [say(turnId, 'late')], fence: a })).rejects.toMatchObject(lost);
    await expect(s.sessions.append(sessionId, [say(turnId, 'late')], a)).rejects.toMatchObject(lost);
    await expect(s.turns.absorb(sessionId, [second.turnId], [say(second.turnId, 'late')], a)).rejects.toMatchObject(lost);
    await expect(s.turns.begin(second.turnId, [say(second.turnId, 'late')], [], a)).rejects.toMatchObject(lost);
    expect((await s.sessions.load(sessionId)).map((e) => e.kind)).toEqual(['user']);
    expect((await s.turns.get(turnId))?.state).toBe('running');
    expect((await s.turns.get(second.turnId))?.state).toBe('queued');
    // The new holder writes.
    await s.turns.finish(turnId, { state: 'completed', entries: [say(turnId, 'from b')], fence: b });
    expect((await s.sessions.load(sessionId)).map((e) => e.kind)).toEqual(['user', 'assistant']);
    await s.close();
  });

  it('a write that presents no fence is not checked (a single gateway, and SQLite, never lease)', async () => {
    const s = await open();
    const { turnId, sessionId } = await accepted(s, 'm1');
    await s.sessionLeases.acquire(sessionId, 'replica-b', 60_000);
    await s.turns.finish(turnId, { state: 'completed', entries: [say(turnId, 'ok')] });
    expect((await s.turns.get(turnId))?.state).toBe('completed');
    await s.close();
  });

  it('orphans: sessions with a begun, suspended or long-queued turn and no live lease', async () => {
    const s = await open();
    const { turnId, sessionId } = await accepted(s, 'm1');
    // Just queued: its accepting replica runs it.
    expect(await s.sessionLeases.orphans(60_000, 'replica-b')).toEqual([]);
    expect(await s.sessionLeases.orphans(0, 'replica-b')).toEqual([sessionId]);
    const lease = (await s.sessionLeases.acquire(sessionId, 'replica-a', 60_000))!;
    expect(await s.sessionLeases.orphans(0, 'replica-b')).toEqual([]);
    // replica-a restarted under its stable id: the lease its previous process held is its own again.
    expect(await s.sessionLeases.orphans(60_000, 'replica-a')).toEqual([sessionId]);
    await s.turns.begin(turnId, [], [], lease);
    expect(await s.sessionLeases.orphans(60_000, 'replica-b')).toEqual([]);
    await lapse(s, sessionId);
    // Begun, and its replica's lease lapsed: orphaned at once.
    expect(await s.sessionLeases.orphans(60_000, 'replica-b')).toEqual([sessionId]);
    await s.turns.finish(turnId, { state: 'completed' });
    expect(await s.sessionLeases.orphans(0, 'replica-b')).toEqual([]);
    await s.close();
  });
});
