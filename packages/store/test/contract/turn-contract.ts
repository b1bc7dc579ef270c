import { expect, it } from 'vitest';
import { dmKey, inbound, queueTurn, roomKey, type StorageRef, tick } from './fixtures.js';

/** The inbox, accept dedupe and the turn state machine. */
export function turnContract(store: StorageRef): void {
  it('accept stores the inbox item and queues a turn in the key’s session', async () => {
    const s = store();
    const msg = inbound('u-1', { principalId: 'p1' });
    const r = await s.turns.accept(msg, { key: dmKey('p1'), clientId: 'c-9' });
    expect(r.duplicate).toBe(false);
    const session = await s.sessions.resolve(dmKey('p1'));
    expect(r.sessionId).toBe(session.id);

    const turn = await s.turns.get(r.turnId ?? '');
    expect(turn).toMatchObject({ sessionId: session.id, inboxId: r.inboxId, state: 'queued', clientId: 'c-9', reason: null, error: null });
    const item = await s.turns.inbox(r.inboxId);
    expect(item).toMatchObject({ channel: 'websocket', account: 'default', dedupeKey: 'u-1', turnId: r.turnId });
    expect(item?.message).toEqual(msg);
    expect(item?.message.receivedAt).toBeInstanceOf(Date);
    expect(item?.receivedAt).toEqual(msg.receivedAt);
    expect(await s.turns.inbox('missing')).toBeNull();
    expect(await s.turns.get('missing')).toBeNull();
  });

  it('a duplicate dedupe key returns the existing item and turn and changes nothing', async () => {
    const s = store();
    const first = await s.turns.accept(inbound('u-1'), { key: dmKey('p1'), clientId: 'a' });
    await s.turns.begin(first.turnId ?? '', []);
    const again = await s.turns.accept(inbound('u-1', { text: 'changed' }), { key: dmKey('p2'), clientId: 'b' });
    expect(again).toEqual({ ...first, duplicate: true, sameText: false });
    expect(await s.turns.accept(inbound('u-1'), { key: dmKey('p1'), clientId: 'a' })).toEqual({ ...first, duplicate: true, sameText: true });
    expect((await s.turns.inbox(first.inboxId))?.message.text).toBe('hello u-1');
    expect(await s.turns.get(first.turnId ?? '')).toMatchObject({ state: 'running', clientId: 'a' });
    expect(await s.turns.unfinished()).toHaveLength(1);
    expect(await s.sessions.list()).toHaveLength(1);
  });

  it('dedupe is scoped to (channel, account)', async () => {
    const s = store();
    const a = await s.turns.accept(inbound('42'), { key: dmKey('p1'), clientId: null });
    const b = await s.turns.accept(inbound('42', { account: 'other' }), { key: dmKey('p1'), clientId: null });
    const c = await s.turns.accept(inbound('42', { channel: 'telegram' }), { key: dmKey('p1'), clientId: null });
    expect([a.duplicate, b.duplicate, c.duplicate]).toEqual([false, false, false]);
    expect(new Set([a.turnId, b.turnId, c.turnId]).size).toBe(3);
    expect(new Set([a.sessionId, b.sessionId, c.sessionId]).size).toBe(1);
  });

  it('accept after a reset queues into the new session', async () => {
    const s = store();
    const a = await queueTurn(s, 'm1');
    await s.sessions.reset(dmKey('p1'));
    const b = await queueTurn(s, 'm2');
    expect(b.sessionId).not.toBe(a.sessionId);
    expect((await s.sessions.resolve(dmKey('p1'))).id).toBe(b.sessionId);
  });

  it('begin marks the turn running and appends the user entry', async () => {
    const s = store();
    const { turnId, sessionId } = await queueTurn(s, 'm1');
    const queued = await s.turns.get(turnId);
    await tick();
    const written = await s.turns.begin(turnId, [{ kind: 'user', turnId, payload: { text: 'hi' } }]);
    const running = written.turn;
    expect(running).toMatchObject({ id: turnId, state: 'running' });
    expect(running.updatedAt.getTime()).toBeGreaterThan(queued?.updatedAt.getTime() ?? Infinity);
    expect(await s.turns.get(turnId)).toEqual(running);
    expect(await s.sessions.loadTurn(turnId)).toMatchObject([{ seq: 1, kind: 'user', sessionId, payload: { text: 'hi' } }]);
    // begin answers the entries exactly as stored: what a transcript cache mirrors.
    expect(written.entries).toEqual(await s.sessions.loadTurn(turnId));

    const other = await queueTurn(s, 'm2');
    await s.turns.begin(other.turnId, []);
    expect(await s.sessions.load(sessionId)).toHaveLength(1);
  });

  it('setState records state, reason and error', async () => {
    const s = store();
    const { turnId } = await queueTurn(s, 'm1');
    await s.turns.begin(turnId, []);
    await s.turns.setState(turnId, 'awaiting_approval');
    expect((await s.turns.get(turnId))?.state).toBe('awaiting_approval');
    await s.turns.setState(turnId, 'failed', { reason: 'model_error', error: 'HTTP 500' });
    expect(await s.turns.get(turnId)).toMatchObject({ state: 'failed', reason: 'model_error', error: 'HTTP 500' });
  });

  it('unfinished lists non-final turns oldest first', async () => {
    const s = store();
    const ids: string[] = [];
    for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) ids.push((await queueTurn(s, k, dmKey(k))).turnId);
    const [a, b, c, d, e, f] = ids as [string, string, string, string, string, string];
    await s.turns.begin(b, []);
    await s.turns.setState(c, 'completed', { reason: 'end_turn' });
    await s.turns.setState(d, 'awaiting_approval');
    await s.turns.setState(e, 'interrupted');
    await s.turns.setState(f, 'suspended');
    const left = await s.turns.unfinished();
    expect(left.map((t) => t.id)).toEqual([a, b, d, f]);
    expect(left.map((t) => t.state)).toEqual(['queued', 'running', 'awaiting_approval', 'suspended']);
    await s.turns.setState(a, 'failed');
    expect((await s.turns.unfinished()).map((t) => t.id)).toEqual([b, d, f]);
  });

  it('nextQueued returns the oldest queued turn of that session only', async () => {
    const s = store();
    const t1 = await queueTurn(s, 'm1');
    const t2 = await queueTurn(s, 'm2');
    const t3 = await queueTurn(s, 'm3');
    const elsewhere = await queueTurn(s, 'r1', roomKey('C1'));
    expect((await s.turns.nextQueued(t1.sessionId))?.id).toBe(t1.turnId);
    await s.turns.begin(t1.turnId, []);
    expect((await s.turns.nextQueued(t1.sessionId))?.id).toBe(t2.turnId);
    await s.turns.setState(t2.turnId, 'completed');
    await s.turns.setState(t3.turnId, 'completed');
    expect(await s.turns.nextQueued(t1.sessionId)).toBeNull();
    expect((await s.turns.nextQueued(elsewhere.sessionId))?.id).toBe(elsewhere.turnId);
    expect(await s.turns.nextQueued('missing')).toBeNull();
  });

  it('suspendActive suspends running and awaiting-approval turns and counts them', async () => {
    const s = store();
    const q = await queueTurn(s, 'q', dmKey('a'));
    const r = await queueTurn(s, 'r', dmKey('b'));
    const w = await queueTurn(s, 'w', dmKey('c'));
    const done = await queueTurn(s, 'd', dmKey('d'));
    await s.turns.begin(r.turnId, []);
    await s.turns.setState(w.turnId, 'awaiting_approval');
    await s.turns.setState(done.turnId, 'completed');
    expect(await s.turns.suspendActive()).toBe(2);
    expect((await s.turns.get(q.turnId))?.state).toBe('queued');
    expect((await s.turns.get(r.turnId))?.state).toBe('suspended');
    expect((await s.turns.get(w.turnId))?.state).toBe('suspended');
    expect((await s.turns.get(done.turnId))?.state).toBe('completed');
    expect(await s.turns.suspendActive()).toBe(0);
  });

  it('setState records the turn usage with the final state', async () => {
    const s = store();
    const r = await s.turns.accept(inbound('u-usage'), { key: dmKey('p1'), clientId: null });
    await s.turns.begin(r.turnId!, []);
    const usage = {
      inputTokens: 10,
      outputTokens: 5,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      models: { main: { calls: 1, inputTokens: 4, outputTokens: 2 }, fallback: { calls: 1, inputTokens: 6, outputTokens: 3 } },
      retries: 2,
      fallbackUsed: true,
    };
    await s.turns.setState(r.turnId!, 'completed', { reason: 'completed', usage });
    expect(await s.turns.get(r.turnId!)).toMatchObject({ state: 'completed', usage });
  });

  it('finish stores the waiting entries and the end in one step, from queued or running, and answers them as stored', async () => {
    const s = store();
    const { turnId, sessionId } = await queueTurn(s, 'f1');
    await s.sessions.append(sessionId, [{ kind: 'note', turnId: null, payload: 'before' }]);
    const usage = { inputTokens: 3, outputTokens: 2, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, models: {}, retries: 0, fallbackUsed: false };
    // A turn that never began durably goes straight from queued to its end.
    const done = await s.turns.finish(turnId, {
      state: 'completed',
      reason: 'completed',
      usage,
      entries: [
        { kind: 'user', turnId, payload: { text: 'hi' } },
        { kind: 'assistant', turnId, payload: { text: 'yo' } },
      ],
    });
    expect(done.turn).toMatchObject({ id: turnId, state: 'completed', reason: 'completed', error: null, usage });
    expect(await s.turns.get(turnId)).toEqual(done.turn);
    expect(done.entries.map((e) => [e.seq, e.kind])).toEqual([
      [2, 'user'],
      [3, 'assistant'],
    ]);
    expect(done.entries).toEqual(await s.sessions.loadTurn(turnId));

    // From running, with no entries: only the state (and an error) change; usage stays when not given.
    const other = await queueTurn(s, 'f2');
    await s.turns.begin(other.turnId, []);
    const failed = await s.turns.finish(other.turnId, { state: 'failed', reason: 'model_error', error: 'HTTP 500' });
    expect(failed).toMatchObject({ turn: { state: 'failed', reason: 'model_error', error: 'HTTP 500', usage: null }, entries: [] });
    const suspended = await queueTurn(s, 'f3');
    await s.turns.finish(suspended.turnId, { state: 'suspended', reason: 'shutdown', entries: [{ kind: 'user', turnId: suspended.turnId, payload: {} }] });
    expect(await s.turns.unfinished()).toMatchObject([{ id: suspended.turnId, state: 'suspended' }]);
    await expect(s.turns.finish('missing', { state: 'completed' })).rejects.toThrow(/unknown turn/);
  });

  it('finish records the last final part in the ledger in the same step, first write wins, and rolls both back together', async () => {
    const s = store();
    const { turnId } = await queueTurn(s, 'f5');
    const part = {
      turnId,
      part: 0,
      kind: 'final' as const,
      channel: 'websocket',
      account: 'default',
      conversationId: 'c1',
      platformMessageId: null,
      content: { text: 'yo' },
    };
    const done = await s.turns.finish(turnId, { state: 'completed', reason: 'completed', delivery: part });
    expect(done.turn.state).toBe('completed');
    expect(done.delivery).toMatchObject({ existed: false, record: { turnId, part: 0, kind: 'final', content: { text: 'yo' } } });
    expect(await s.deliveries.ofTurn(turnId)).toEqual([done.delivery!.record]);

    // Already ledgered (a resumed turn): the stored row is answered, not replaced.
    const again = await queueTurn(s, 'f6');
    const first = await s.deliveries.record({ ...part, turnId: again.turnId, content: { text: 'first' } });
    const resumed = await s.turns.finish(again.turnId, { state: 'completed', delivery: { ...part, turnId: again.turnId, content: { text: 'second' } } });
    expect(resumed.delivery).toEqual({ existed: true, record: first.record });

    // A finish that fails stores neither the end nor the row.
    const broken = await queueTurn(s, 'f7');
    const bad = { kind: null, turnId: broken.turnId, payload: {} } as unknown as { kind: 'user'; turnId: string; payload: unknown };
    await expect(s.turns.finish(broken.turnId, { state: 'completed', entries: [bad], delivery: { ...part, turnId: broken.turnId } })).rejects.toThrow();
    expect((await s.turns.get(broken.turnId))?.state).toBe('queued');
    expect(await s.deliveries.ofTurn(broken.turnId)).toEqual([]);
  });

  it('finish changes nothing when an entry cannot be stored', async () => {
    const s = store();
    const { turnId, sessionId } = await queueTurn(s, 'f4');
    const bad = { kind: null, turnId, payload: {} } as unknown as { kind: 'user'; turnId: string; payload: unknown };
    await expect(s.turns.finish(turnId, { state: 'completed', entries: [{ kind: 'user', turnId, payload: {} }, bad] })).rejects.toThrow();
    expect((await s.turns.get(turnId))?.state).toBe('queued');
    expect(await s.sessions.load(sessionId)).toEqual([]);
  });

  it('absorb appends the steered messages and completes their queued turns in one step', async () => {
    const s = store();
    const running = await s.turns.accept(inbound('u-run'), { key: dmKey('p1'), clientId: null });
    await s.turns.begin(running.turnId!, []);
    const steer = await s.turns.accept(inbound('u-steer'), { key: dmKey('p1'), clientId: null });
    const absorbed = await s.turns.absorb(
      running.sessionId!,
      [steer.turnId!],
      [{ kind: 'user', turnId: steer.turnId!, payload: { content: [{ type: 'text', text: 'also this' }] } }],
    );
    expect(await s.turns.get(steer.turnId!)).toMatchObject({ state: 'completed', reason: 'steered' });
    expect(await s.turns.nextQueued(running.sessionId!)).toBeNull();
    const entries = await s.sessions.load(running.sessionId!);
    expect(entries.map((e) => [e.kind, e.turnId])).toEqual([['user', steer.turnId]]);
    expect(absorbed).toEqual(entries);
    // A turn that is no longer queued cannot be absorbed, and nothing is appended.
    await expect(s.turns.absorb(running.sessionId!, [steer.turnId!], [{ kind: 'user', turnId: steer.turnId!, payload: {} }])).rejects.toThrow();
    expect(await s.sessions.load(running.sessionId!)).toHaveLength(1);
  });

  it('seen reports a stored dedupe key like a duplicate accept, and null for a new one', async () => {
    const s = store();
    expect(await s.turns.seen('websocket', 'default', 'u-seen')).toBeNull();
    const r = await s.turns.accept(inbound('u-seen'), { key: dmKey('p1'), clientId: null });
    expect(await s.turns.seen('websocket', 'default', 'u-seen')).toEqual({ ...r, duplicate: true });
    expect(await s.turns.seen('websocket', 'other', 'u-seen')).toBeNull();
  });

  it('seen with a text says whether the stored item has the same text; a purged item is not compared', async () => {
    const s = store();
    const r = await s.turns.accept(inbound('u-text'), { key: dmKey('p1'), clientId: null });
    expect(await s.turns.seen('websocket', 'default', 'u-text', 'hello u-text')).toEqual({ ...r, duplicate: true, sameText: true });
    expect(await s.turns.seen('websocket', 'default', 'u-text', 'something else')).toEqual({ ...r, duplicate: true, sameText: false });
    await s.sessions.purge(r.sessionId!);
    expect(await s.turns.seen('websocket', 'default', 'u-text', 'something else')).toEqual({ ...r, duplicate: true });
  });
}
