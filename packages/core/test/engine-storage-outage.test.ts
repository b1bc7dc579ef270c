import { openSqliteStorage } from '@switchboard/store';
import { describe, expect, it } from 'vitest';
import { type Storage, SwbError, SwbErrorCode } from '../src/index.js';
import { harness, say, testTool } from './engine-fixtures.js';

/**
 * A SQLite store whose `turns.finish` (the write of a turn's end) fails with
 * SWB_E_STORAGE_UNAVAILABLE while `down` is set — as the PostgreSQL store's writes do when the
 * server goes away after the model answered.
 */
function flakyStore(): { storage: Storage; outage: { down: boolean } } {
  const raw = openSqliteStorage({ file: ':memory:' });
  const outage = { down: false };
  const storage = new Proxy(raw, {
    get(target, repoName, receiver) {
      const repo: unknown = Reflect.get(target, repoName, receiver);
      if (typeof repo !== 'object' || repo === null) return repo;
      return new Proxy(repo, {
        get(r, method, rr) {
          const fn: unknown = Reflect.get(r, method, rr);
          if (typeof fn !== 'function') return fn;
          return (...args: unknown[]) => {
            if (outage.down && repoName === 'turns' && method === 'finish')
              return Promise.reject(new SwbError(SwbErrorCode.StorageUnavailable, 'The database is unreachable (test).'));
            return (fn as (...a: unknown[]) => unknown).apply(r, args);
          };
        },
      });
    },
  });
  return { storage, outage };
}

const settled = async (h: { engine: { drain(ms: number): Promise<boolean> } }) => expect(await h.engine.drain(60_000)).toBe(true);

describe('TurnEngine: a storage outage mid-turn', () => {
  it('a cut-off turn that had stored its tool call stays running (not failed), the outage is reported, and resumeInterrupted completes it once', async () => {
    const { storage, outage } = flakyStore();
    const outages: number[] = [];
    const read = testTool('read_file', true, async (input) => `contents of ${input.path}`);
    const h = harness({
      raw: storage,
      tools: [read],
      steps: [{ content: [{ type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a.txt' } }] }, say('read it'), say('read it, resumed')],
      onStorageOutage: () => outages.push(1),
    });
    // The model answers while the database is away: the turn's end cannot be stored.
    outage.down = true;
    const { turnId, sessionId } = await h.send('m1', 'hi');
    await settled(h);
    outage.down = false;
    expect(outages.length).toBeGreaterThan(0);
    expect((await storage.turns.get(turnId))?.state).toBe('running');
    expect(await storage.deliveries.ofTurn(turnId)).toEqual([]);

    expect(await h.engine.resumeInterrupted()).toBe(1);
    await settled(h);
    expect(await storage.turns.get(turnId)).toMatchObject({ state: 'completed', reason: 'completed' });
    expect((await storage.deliveries.ofTurn(turnId)).map((d) => [d.kind, d.content.text])).toEqual([['final', 'read it, resumed']]);
    expect((await storage.sessions.load(sessionId)).map((e) => e.kind)).toEqual(['user', 'assistant', 'tool_start', 'tool_result', 'assistant']);
    // Nothing left to resume.
    expect(await h.engine.resumeInterrupted()).toBe(0);
  });

  it('a cut-off text turn stays queued; a message before the recovery runs it first, then its own', async () => {
    const { storage, outage } = flakyStore();
    const h = harness({ raw: storage, steps: [say('one'), say('one, again'), say('two')] });
    outage.down = true;
    const first = await h.send('m1', 'first');
    await settled(h);
    outage.down = false;
    expect((await storage.turns.get(first.turnId))?.state).toBe('queued');
    const second = await h.send('m2', 'second');
    await settled(h);
    expect(await storage.turns.get(first.turnId)).toMatchObject({ state: 'completed' });
    expect(await storage.turns.get(second.turnId)).toMatchObject({ state: 'completed' });
    expect((await storage.deliveries.ofTurn(first.turnId)).map((d) => d.content.text)).toEqual(['one, again']);
    expect((await storage.deliveries.ofTurn(second.turnId)).map((d) => d.content.text)).toEqual(['two']);
    expect(await h.engine.resumeInterrupted()).toBe(0);
  });
});
