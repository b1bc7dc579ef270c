import type { NewDelivery } from '@switchboard/core';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStorage, type PostgresStorage } from '../src/index.js';
import { dmKey, inbound, queueTurn, usageCall } from './contract/fixtures.js';

// What SQLite's single writer hides: on PostgreSQL several transactions run at once. Each test
// fires its calls together over a pool of 10 connections and checks the invariant the repository promises.
let server: PgServer;
const TEMPLATE = 'sb_concurrency_template';
let s: PostgresStorage;

beforeAll(async () => {
  server = await startPostgres();
  const migrated = await openPostgresStorage({ url: await server.createDatabase({ name: TEMPLATE }) });
  await migrated.close();
});
afterAll(async () => server?.destroy());
afterEach(async () => s?.close());

const open = async (): Promise<PostgresStorage> => {
  s = await openPostgresStorage({ url: await server.createDatabase({ template: TEMPLATE }), max: 10 });
  return s;
};

const note = (text: string) => ({ turnId: null, kind: 'note' as const, payload: { text } });

/**
 * Polls `read(cursor)` until `writers` settle and a poll after that returns nothing new; every id
 * the reader was handed, in the order it was handed them.
 */
async function followCursor(writers: Promise<unknown>, read: (cursor: number) => Promise<{ ids: number[]; last: number }>): Promise<number[]> {
  let done = false;
  const finished = writers.finally(() => {
    done = true;
  });
  const seen: number[] = [];
  let cursor = 0;
  for (;;) {
    const writersDone = done;
    const { ids, last } = await read(cursor);
    seen.push(...ids);
    cursor = last;
    if (writersDone && ids.length === 0) break;
  }
  await finished;
  return seen;
}

describe('PostgreSQL storage under concurrent callers', () => {
  it('30 concurrent appends to one session (sessions.append and turns.append) number its entries 1..N, each once', async () => {
    await open();
    const { sessionId, turnId } = await queueTurn(s, 'm1');
    const calls = Array.from({ length: 30 }, (_, i) =>
      i % 2 === 0
        ? s.sessions.append(sessionId, [note(`s${i}`)])
        : s.turns.append(
            turnId,
            [
              { ...note(`t${i}a`), turnId },
              { ...note(`t${i}b`), turnId },
            ],
            [usageCall({ turnId, sessionId })],
          ),
    );
    const results = await Promise.all(calls);
    // Each call's entries are contiguous among themselves.
    for (const entries of results) {
      const seqs = entries.map((e) => e.seq);
      expect(seqs).toEqual(seqs.map((_, k) => (seqs[0] as number) + k));
    }
    const stored = await s.sessions.load(sessionId);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
    expect(
      results
        .flat()
        .map((e) => e.seq)
        .sort((a, b) => a - b),
    ).toEqual(stored.map((e) => e.seq));
    expect((await s.usage.report()).totals.calls).toBe(15);
  });

  it('20 concurrent accepts of one dedupe key make exactly one turn; the others are duplicates of it', async () => {
    await open();
    const p = await s.principals.create({ name: 'ada', role: 'member' });
    const results = await Promise.all(Array.from({ length: 20 }, () => s.turns.accept(inbound('same'), { key: dmKey(p.id), clientId: null })));
    const fresh = results.filter((r) => !r.duplicate);
    expect(fresh).toHaveLength(1);
    const [first] = fresh;
    for (const r of results.filter((r) => r.duplicate)) {
      expect(r).toMatchObject({ inboxId: first?.inboxId, turnId: first?.turnId, sessionId: first?.sessionId, sameText: true });
    }
    expect((await s.db.row<{ n: number }>('SELECT count(*) AS n FROM turns'))?.n).toBe(1);
    expect((await s.db.row<{ n: number }>('SELECT count(*) AS n FROM inbox'))?.n).toBe(1);
  });

  it('concurrent accepts for one new session key resolve to one live session', async () => {
    await open();
    const p = await s.principals.create({ name: 'ada', role: 'member' });
    const key = dmKey(p.id);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.turns.accept(inbound(`k${i}`), { key, clientId: null })));
    expect(results.every((r) => !r.duplicate)).toBe(true);
    expect(new Set(results.map((r) => r.sessionId)).size).toBe(1);
    expect((await s.db.row<{ n: number }>('SELECT count(*) AS n FROM sessions'))?.n).toBe(1);
    const resolved = await Promise.all(Array.from({ length: 10 }, () => s.sessions.resolve(dmKey(p.id, 'other'))));
    expect(new Set(resolved.map((r) => r.id)).size).toBe(1);
    expect((await s.turns.unfinished()).map((t) => t.sessionId)).toEqual(results.map(() => results[0]?.sessionId));
  });

  it('a reader polling usage.changes while 8 callers record sees every row exactly once', async () => {
    await open();
    const writers = Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 40; i++) await s.usage.record(usageCall({ turnId: `t${w}-${i}` }));
      }),
    );
    const seen = await followCursor(writers, async (cursor) => {
      const { rows, last } = await s.usage.changes(cursor, 50);
      return { ids: rows.map((r) => r.seq), last };
    });
    const all = (await s.db.rows<{ rowid: number }>('SELECT rowid FROM usage ORDER BY rowid')).map((r) => r.rowid);
    expect(all).toHaveLength(320);
    expect(seen).toEqual(all);
  });

  it('a reader following deliveries.finalsSince while 8 callers record finals sees every final exactly once', async () => {
    await open();
    const final = (turnId: string): NewDelivery => ({
      turnId,
      part: 0,
      kind: 'final',
      channel: 'websocket',
      account: 'default',
      conversationId: 'conv-1',
      platformMessageId: null,
      content: { text: `reply ${turnId}` },
    });
    const writers = Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; i < 40; i++) await s.deliveries.record(final(`t${w}-${i}`));
      }),
    );
    const seen = await followCursor(writers, async (cursor) => {
      const rows = await s.deliveries.finalsSince('websocket', 'default', 'conv-1', cursor);
      return { ids: rows.map((r) => r.id), last: rows.at(-1)?.id ?? cursor };
    });
    const all = (await s.db.rows<{ id: number }>('SELECT id FROM deliveries ORDER BY id')).map((r) => r.id);
    expect(all).toHaveLength(320);
    expect(seen).toEqual(all);
  });

  it('turns of 12 sessions begin and finish at once, with model calls and a final each: no deadlock, every row once', async () => {
    await open();
    const turns = await Promise.all(Array.from({ length: 12 }, (_, i) => queueTurn(s, `m${i}`, dmKey(`p${i}`))));
    const writers = Promise.all(
      turns.map(async ({ turnId, sessionId }, i) => {
        const call = usageCall({ turnId, sessionId });
        await s.turns.begin(turnId, [{ turnId, kind: 'user', payload: { text: `q${i}` } }], [call]);
        await s.turns.append(turnId, [{ turnId, kind: 'assistant', payload: [] }], [call]);
        await s.turns.finish(turnId, {
          state: 'completed',
          entries: [{ turnId, kind: 'assistant', payload: [{ type: 'text', text: `a${i}` }] }],
          calls: [call],
          delivery: {
            turnId,
            part: 0,
            kind: 'final',
            channel: 'websocket',
            account: 'default',
            conversationId: 'conv-1',
            platformMessageId: null,
            content: { text: `a${i}` },
          },
        });
      }),
    );
    const [usageSeen, finalsSeen] = await Promise.all([
      followCursor(writers, async (cursor) => {
        const { rows, last } = await s.usage.changes(cursor);
        return { ids: rows.map((r) => r.seq), last };
      }),
      followCursor(writers, async (cursor) => {
        const rows = await s.deliveries.finalsSince('websocket', 'default', 'conv-1', cursor);
        return { ids: rows.map((r) => r.id), last: rows.at(-1)?.id ?? cursor };
      }),
    ]);
    const usageIds = (await s.db.rows<{ rowid: number }>('SELECT rowid FROM usage ORDER BY rowid')).map((r) => r.rowid);
    expect(usageIds).toHaveLength(36);
    expect(usageSeen).toEqual(usageIds);
    expect(finalsSeen).toEqual((await s.db.rows<{ id: number }>('SELECT id FROM deliveries ORDER BY id')).map((r) => r.id));
    expect(finalsSeen).toHaveLength(12);
    for (const { turnId, sessionId } of turns) {
      expect((await s.turns.get(turnId))?.state).toBe('completed');
      expect((await s.sessions.load(sessionId)).map((e) => e.seq)).toEqual([1, 2, 3]);
    }
  });
});
