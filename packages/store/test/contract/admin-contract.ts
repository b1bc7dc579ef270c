import { expect, it } from 'vitest';
import { dmKey, inbound, queueTurn, type StorageRef } from './fixtures.js';

/** What the control API changes: principal update/remove, identity unlink, session end/purge. */
export function adminContract(store: StorageRef): void {
  it("updates a principal's name and role, refusing a taken name", async () => {
    const s = store();
    const ada = await s.principals.create({ name: 'ada', role: 'member' });
    await s.principals.create({ name: 'bob', role: 'guest' });
    const renamed = await s.principals.update(ada.id, { name: 'ada2' });
    expect(renamed).toMatchObject({ id: ada.id, name: 'ada2', role: 'member' });
    expect(await s.principals.update(ada.id, { role: 'admin' })).toMatchObject({ name: 'ada2', role: 'admin' });
    expect(await s.principals.byName('ada')).toBeNull();
    await expect(s.principals.update(ada.id, { name: 'bob' })).rejects.toThrow();
    expect((await s.principals.get(ada.id))?.name).toBe('ada2');
    expect(await s.principals.update('missing', { role: 'owner' })).toBeNull();
  });

  it('unlinks one identity of a principal and leaves the others alone', async () => {
    const s = store();
    const ada = await s.principals.create({ name: 'ada', role: 'member' });
    const eve = await s.principals.create({ name: 'eve', role: 'member' });
    await s.principals.linkIdentity(ada.id, 'telegram', '1');
    await s.principals.linkIdentity(ada.id, 'slack', 'T:U1');
    expect(await s.principals.unlinkIdentity(eve.id, 'telegram', '1')).toBe(false);
    expect(await s.principals.unlinkIdentity(ada.id, 'telegram', '1')).toBe(true);
    expect(await s.principals.unlinkIdentity(ada.id, 'telegram', '1')).toBe(false);
    expect(await s.principals.byIdentity('telegram', '1')).toBeNull();
    expect((await s.principals.identities(ada.id)).map((i) => i.channelType)).toEqual(['slack']);
    // Once unlinked, the identity may be linked to someone else.
    await s.principals.linkIdentity(eve.id, 'telegram', '1');
    expect((await s.principals.byIdentity('telegram', '1'))?.id).toBe(eve.id);
  });

  it('removes a principal with its identities, revoking and detaching its tokens', async () => {
    const s = store();
    const ada = await s.principals.create({ name: 'ada', role: 'member' });
    const bob = await s.principals.create({ name: 'bob', role: 'member' });
    await s.principals.linkIdentity(ada.id, 'telegram', '1');
    await s.principals.linkIdentity(ada.id, 'ws', 'tok');
    await s.tokens.create({ kind: 'client', name: 'ada-1', principalId: ada.id, scopes: [], secretHash: 'a'.repeat(64) });
    await s.tokens.create({ kind: 'client', name: 'bob-1', principalId: bob.id, scopes: [], secretHash: 'b'.repeat(64) });
    expect(await s.principals.remove(ada.id)).toEqual({ identities: 2, tokens: 1 });
    expect(await s.principals.get(ada.id)).toBeNull();
    expect(await s.principals.byIdentity('telegram', '1')).toBeNull();
    const token = await s.tokens.byHash('a'.repeat(64));
    expect(token).toMatchObject({ name: 'ada-1', principalId: null });
    expect(token?.revokedAt).toBeInstanceOf(Date);
    expect(await s.tokens.byHash('b'.repeat(64))).toMatchObject({ principalId: bob.id, revokedAt: null });
    expect(await s.principals.remove(ada.id)).toBeNull();
    // The name is free again.
    expect((await s.principals.create({ name: 'ada', role: 'guest' })).name).toBe('ada');
  });

  it('ends a session by id; the key then resolves to a fresh session', async () => {
    const s = store();
    const a = await s.sessions.resolve(dmKey('p1'));
    expect(await s.sessions.end(a.id)).toBe(true);
    expect(await s.sessions.end(a.id)).toBe(false);
    expect(await s.sessions.end('missing')).toBe(false);
    expect((await s.sessions.get(a.id))?.endedAt).toBeInstanceOf(Date);
    expect((await s.sessions.resolve(dmKey('p1'))).id).not.toBe(a.id);
  });

  it('purges a session: ended, entries, ledger rows and inbox text gone, dedupe kept', async () => {
    const s = store();
    const { turnId, sessionId, inboxId } = await queueTurn(s, 'm1');
    const other = await queueTurn(s, 'm2', dmKey('p2'));
    await s.turns.begin(turnId, [{ kind: 'user', turnId, payload: { text: 'secret plans' } }]);
    await s.sessions.append(sessionId, [{ kind: 'assistant', turnId, payload: [{ type: 'text', text: 'ok' }] }]);
    await s.turns.setState(turnId, 'completed');
    const conv = { channel: 'websocket', account: 'default', conversationId: 'conv-1', platformMessageId: null, content: { text: 'ok' } };
    await s.deliveries.record({ ...conv, turnId, part: 0, kind: 'final' });
    await s.deliveries.record({ ...conv, turnId: other.turnId, part: 0, kind: 'final' });
    await s.sessions.append(other.sessionId, [{ kind: 'note', turnId: null, payload: 'keep' }]);

    expect(await s.sessions.purge(sessionId)).toEqual({ entries: 2, deliveries: 1 });
    expect((await s.sessions.get(sessionId))?.endedAt).toBeInstanceOf(Date);
    expect(await s.sessions.load(sessionId)).toEqual([]);
    expect(await s.deliveries.ofTurn(turnId)).toEqual([]);
    expect(await s.deliveries.ofTurn(other.turnId)).toHaveLength(1);
    expect((await s.turns.inbox(inboxId))?.message.text).toBe('');
    expect((await s.turns.get(turnId))?.state).toBe('completed');
    expect(await s.sessions.load(other.sessionId)).toHaveLength(1);
    const again = await s.turns.accept((await s.turns.inbox(inboxId))!.message, { key: dmKey('p1'), clientId: null });
    expect(again.duplicate).toBe(true);
    expect(await s.sessions.purge('missing')).toBeNull();
  });

  it('purges and deduplicates a message whose text holds NUL and other control characters (JSON escapes every engine must read)', async () => {
    const s = store();
    const text = 'nul\u0000 bell\u0007 \ud83d\ude00 "quoted" \\';
    const first = await s.turns.accept(inbound('ctl', { text }), { key: dmKey('p1'), clientId: null });
    expect(await s.turns.seen('websocket', 'default', 'ctl', text)).toMatchObject({ duplicate: true, turnId: first.turnId, sameText: true });
    expect(await s.turns.accept(inbound('ctl', { text }), { key: dmKey('p1'), clientId: null })).toEqual({ ...first, duplicate: true, sameText: true });
    expect((await s.turns.inbox(first.inboxId))?.message.text).toBe(text);
    expect(await s.sessions.purge(first.sessionId ?? '')).toEqual({ entries: 0, deliveries: 0 });
    const purged = await s.turns.inbox(first.inboxId);
    expect(purged?.message).toEqual({ ...inbound('ctl', { text }), text: '' });
    expect(await s.turns.seen('websocket', 'default', 'ctl', text)).toEqual({
      duplicate: true,
      inboxId: first.inboxId,
      turnId: first.turnId,
      sessionId: first.sessionId,
    });
  });
}
