import { sessionKeyString } from '@switchboard/core';
import { expect, it } from 'vitest';
import { dmKey, roomKey, type StorageRef, tick } from './fixtures.js';

/** Sessions, reset and the append-only transcript. */
export function sessionContract(store: StorageRef): void {
  it('resolves one live session per key', async () => {
    const s = store();
    const a = await s.sessions.resolve(dmKey('p1'));
    expect(await s.sessions.resolve(dmKey('p1'))).toEqual(a);
    expect(a).toMatchObject({
      key: sessionKeyString(dmKey('p1')),
      agentId: 'main',
      channel: 'websocket',
      account: 'default',
      scope: 'dm',
      principalId: 'p1',
      conversation: null,
      thread: null,
      endedAt: null,
    });
    const room = await s.sessions.resolve(roomKey('C1', '171.5'));
    expect(room).toMatchObject({ scope: 'room', principalId: null, conversation: 'C1', thread: '171.5' });
    const ids = new Set([a.id, room.id, (await s.sessions.resolve(roomKey('C1'))).id, (await s.sessions.resolve(dmKey('p2'))).id]);
    expect(ids.size).toBe(4);
    expect(await s.sessions.get(a.id)).toEqual(a);
    expect(await s.sessions.get('missing')).toBeNull();
  });

  it('reset ends the live session and the next resolve starts a fresh one', async () => {
    const s = store();
    const old = await s.sessions.resolve(dmKey('p1'));
    const other = await s.sessions.resolve(dmKey('p2'));
    await s.sessions.append(old.id, [{ kind: 'user', turnId: null, payload: { text: 'before' } }]);
    await s.sessions.reset(dmKey('p1'));
    expect((await s.sessions.get(old.id))?.endedAt).toBeInstanceOf(Date);
    const fresh = await s.sessions.resolve(dmKey('p1'));
    expect(fresh.id).not.toBe(old.id);
    expect(fresh.endedAt).toBeNull();
    expect(await s.sessions.load(fresh.id)).toEqual([]);
    expect(await s.sessions.load(old.id)).toHaveLength(1);
    expect(await s.sessions.resolve(dmKey('p2'))).toEqual(other);
    await s.sessions.reset(dmKey('nobody'));
  });

  it('numbers appended entries per session and round-trips payloads', async () => {
    const s = store();
    const a = await s.sessions.resolve(dmKey('p1'));
    const b = await s.sessions.resolve(dmKey('p2'));
    const payload = { text: 'héllo ✓ 🐙', n: 1.5, nested: { list: [1, 'two', null, true] }, empty: {} };
    const first = await s.sessions.append(a.id, [
      { kind: 'user', turnId: 't1', payload },
      { kind: 'assistant', turnId: 't1', payload: [{ type: 'text', text: 'hi' }] },
    ]);
    expect(first.map((e) => e.seq)).toEqual([1, 2]);
    expect(first[0]).toMatchObject({ sessionId: a.id, kind: 'user', turnId: 't1', payload });
    expect(first[0]?.createdAt).toBeInstanceOf(Date);
    expect((await s.sessions.append(b.id, [{ kind: 'note', turnId: null, payload: 'x' }]))[0]?.seq).toBe(1);
    const more = await s.sessions.append(a.id, [
      { kind: 'tool_start', turnId: 't2', payload: { id: 'tu1' } },
      { kind: 'tool_result', turnId: 't2', payload: { id: 'tu1', ok: true } },
    ]);
    expect(more.map((e) => e.seq)).toEqual([3, 4]);
    expect(await s.sessions.append(a.id, [])).toEqual([]);

    const loaded = await s.sessions.load(a.id);
    expect(loaded).toEqual([...first, ...more]);
    expect(loaded[0]?.payload).toEqual(payload);
    expect((await s.sessions.loadTurn('t2')).map((e) => e.kind)).toEqual(['tool_start', 'tool_result']);
    expect(await s.sessions.loadTurn('none')).toEqual([]);
  });

  it('loadFromBoundary reads from the last compact boundary: entries after its throughSeq and its own turn’s entries', async () => {
    const s = store();
    const a = await s.sessions.resolve(dmKey('p1'));
    const entry = (turnId: string, kind: 'user' | 'assistant' = 'user') => ({ kind, turnId, payload: { turnId } });
    await s.sessions.append(a.id, [entry('t1'), entry('t1', 'assistant'), entry('t2'), entry('t2', 'assistant')]);
    // Without a boundary: everything.
    expect((await s.sessions.loadFromBoundary(a.id)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    await s.sessions.append(a.id, [entry('t3'), { kind: 'compact', turnId: 't3', payload: { summary: 'S1', throughSeq: 2 } }, entry('t3', 'assistant')]);
    expect((await s.sessions.loadFromBoundary(a.id)).map((e) => e.seq)).toEqual([3, 4, 5, 6, 7]);
    // The last boundary wins; its turn's entries up to throughSeq stay (the turn's own text, the earlier boundary).
    await s.sessions.append(a.id, [entry('t4'), { kind: 'compact', turnId: 't3', payload: { summary: 'S2', throughSeq: 6 } }]);
    expect((await s.sessions.loadFromBoundary(a.id)).map((e) => e.seq)).toEqual([5, 6, 7, 8, 9]);
    // A boundary with a nonsense payload is not one to cut at.
    await s.sessions.append(a.id, [{ kind: 'compact', turnId: null, payload: { summary: 'S3', throughSeq: 'x' } }]);
    expect(await s.sessions.loadFromBoundary(a.id)).toEqual(await s.sessions.load(a.id));
    // The full history stays readable.
    expect(await s.sessions.load(a.id)).toHaveLength(10);
  });

  it('append bumps the session updatedAt', async () => {
    const s = store();
    const a = await s.sessions.resolve(dmKey('p1'));
    await tick();
    await s.sessions.append(a.id, [{ kind: 'user', turnId: null, payload: {} }]);
    const after = await s.sessions.get(a.id);
    expect(after?.updatedAt.getTime()).toBeGreaterThan(a.updatedAt.getTime());
    expect(after?.createdAt).toEqual(a.createdAt);
  });

  it('lists sessions newest-updated first, with filters and paging', async () => {
    const s = store();
    const p1 = await s.sessions.resolve(dmKey('p1'));
    await tick();
    const room = await s.sessions.resolve(roomKey('C1'));
    await tick();
    const p2 = await s.sessions.resolve(dmKey('p2'));
    await tick();
    await s.sessions.append(p1.id, [{ kind: 'user', turnId: null, payload: {} }]);

    expect((await s.sessions.list()).map((x) => x.id)).toEqual([p1.id, p2.id, room.id]);
    expect((await s.sessions.list({ principalId: 'p2' })).map((x) => x.id)).toEqual([p2.id]);
    expect((await s.sessions.list({ channel: 'slack' })).map((x) => x.id)).toEqual([room.id]);
    expect((await s.sessions.list({ channel: 'websocket', principalId: 'p1' })).map((x) => x.id)).toEqual([p1.id]);
    expect(await s.sessions.list({ channel: 'telegram' })).toEqual([]);
    expect((await s.sessions.list({ limit: 2 })).map((x) => x.id)).toEqual([p1.id, p2.id]);
    expect((await s.sessions.list({ limit: 2, offset: 1 })).map((x) => x.id)).toEqual([p2.id, room.id]);
    expect((await s.sessions.list({ offset: 2 })).map((x) => x.id)).toEqual([room.id]);
  });

  it('updateSettings merges, removes keys set to null, and survives a resolve', async () => {
    const s = store();
    const session = await s.sessions.resolve(dmKey('p1'));
    expect(session.settings).toEqual({});
    await s.sessions.updateSettings(session.id, { queueMode: 'steer' });
    const both = await s.sessions.updateSettings(session.id, { mode: 'plan' });
    expect(both.settings).toEqual({ queueMode: 'steer', mode: 'plan' });
    const removed = await s.sessions.updateSettings(session.id, { queueMode: null });
    expect(removed.settings).toEqual({ mode: 'plan' });
    expect((await s.sessions.resolve(dmKey('p1'))).settings).toEqual({ mode: 'plan' });
    await expect(s.sessions.updateSettings('missing', { mode: 'plan' })).rejects.toThrow();
  });
}
