import { expect, it } from 'vitest';
import type { StorageRef } from './fixtures.js';

/** Principals, identities and tokens. */
export function identityContract(store: StorageRef): void {
  it('creates principals and finds them by id and name', async () => {
    const s = store();
    expect(await s.principals.count()).toBe(0);
    const ada = await s.principals.create({ name: 'ada', role: 'owner' });
    const bob = await s.principals.create({ name: 'bob', role: 'member' });
    expect(ada).toMatchObject({ name: 'ada', role: 'owner' });
    expect(ada.createdAt).toBeInstanceOf(Date);
    expect(ada.id).not.toBe(bob.id);
    expect(await s.principals.get(ada.id)).toEqual(ada);
    expect(await s.principals.byName('bob')).toEqual(bob);
    expect(await s.principals.byName('carol')).toBeNull();
    expect(await s.principals.get('missing')).toBeNull();
    expect((await s.principals.list()).map((p) => p.name)).toEqual(['ada', 'bob']);
    expect(await s.principals.count()).toBe(2);
  });

  it('links identities and resolves principals through them', async () => {
    const s = store();
    const ada = await s.principals.create({ name: 'ada', role: 'admin' });
    const tg = await s.principals.linkIdentity(ada.id, 'telegram', '1001');
    await s.principals.linkIdentity(ada.id, 'slack', 'U1');
    expect(tg).toMatchObject({ principalId: ada.id, channelType: 'telegram', externalId: '1001' });
    expect(await s.principals.byIdentity('telegram', '1001')).toEqual(ada);
    // Identities are per channel type: the same external id elsewhere is someone else.
    expect(await s.principals.byIdentity('slack', '1001')).toBeNull();
    const ids = await s.principals.identities(ada.id);
    expect(ids.map((i) => `${i.channelType}/${i.externalId}`).sort()).toEqual(['slack/U1', 'telegram/1001']);
  });

  it('re-linking an identity is idempotent and never moves it to another principal', async () => {
    const s = store();
    const ada = await s.principals.create({ name: 'ada', role: 'member' });
    const eve = await s.principals.create({ name: 'eve', role: 'guest' });
    const first = await s.principals.linkIdentity(ada.id, 'telegram', '7');
    expect(await s.principals.linkIdentity(ada.id, 'telegram', '7')).toEqual(first);
    await expect(s.principals.linkIdentity(eve.id, 'telegram', '7')).rejects.toThrow();
    expect((await s.principals.byIdentity('telegram', '7'))?.id).toBe(ada.id);
    expect(await s.principals.identities(eve.id)).toEqual([]);
  });

  it('stores tokens by hash and revokes them', async () => {
    const s = store();
    const ada = await s.principals.create({ name: 'ada', role: 'owner' });
    const client = await s.tokens.create({ kind: 'client', name: 'laptop', principalId: ada.id, scopes: [], secretHash: 'a'.repeat(64) });
    const op = await s.tokens.create({ kind: 'operator', name: 'ci', principalId: null, scopes: ['read', 'admin'], secretHash: 'b'.repeat(64) });
    expect(client).toMatchObject({ kind: 'client', name: 'laptop', principalId: ada.id, scopes: [], revokedAt: null });
    expect(client).not.toHaveProperty('secretHash');
    expect(await s.tokens.byHash('b'.repeat(64))).toEqual(op);
    expect((await s.tokens.byHash('b'.repeat(64)))?.scopes).toEqual(['read', 'admin']);
    expect(await s.tokens.byHash('c'.repeat(64))).toBeNull();
    expect((await s.tokens.list()).map((t) => t.id)).toEqual([client.id, op.id]);

    expect(await s.tokens.revoke(client.id)).toBe(true);
    expect(await s.tokens.revoke(client.id)).toBe(false);
    expect(await s.tokens.revoke('missing')).toBe(false);
    const revoked = await s.tokens.byHash('a'.repeat(64));
    expect(revoked?.revokedAt).toBeInstanceOf(Date);
    expect((await s.tokens.byHash('b'.repeat(64)))?.revokedAt).toBeNull();
  });

  it('keeps expiresAt and createdBy, and records a use at most once per interval', async () => {
    const s = store();
    const at = new Date('2031-05-01T00:00:00Z');
    const t = await s.tokens.create({
      kind: 'operator',
      name: 'meta',
      principalId: null,
      scopes: ['read'],
      secretHash: 'd'.repeat(64),
      expiresAt: at,
      createdBy: 'cli:test',
    });
    expect(t).toMatchObject({ expiresAt: at, createdBy: 'cli:test', lastUsedAt: null });
    const plain = await s.tokens.create({ kind: 'operator', name: 'plain', principalId: null, scopes: ['read'], secretHash: 'e'.repeat(64) });
    expect(plain).toMatchObject({ expiresAt: null, createdBy: null, lastUsedAt: null });
    const t0 = new Date('2030-01-01T00:00:00Z');
    expect(await s.tokens.touch(t.id, t0, 60_000)).toBe(true);
    expect(await s.tokens.touch(t.id, new Date(t0.getTime() + 59_999), 60_000)).toBe(false);
    expect((await s.tokens.get(t.id))?.lastUsedAt).toEqual(t0);
    const t1 = new Date(t0.getTime() + 60_000);
    expect(await s.tokens.touch(t.id, t1, 60_000)).toBe(true);
    expect((await s.tokens.byHash('d'.repeat(64)))?.lastUsedAt).toEqual(t1);
    expect(await s.tokens.touch('missing', t1, 60_000)).toBe(false);
  });

  it('tokens.get finds a token by id, revoked or not, and null for an unknown id', async () => {
    const s = store();
    const p = await s.principals.create({ name: 'getter', role: 'member' });
    const t = await s.tokens.create({ kind: 'client', name: 'c', principalId: p.id, scopes: [], secretHash: 'f'.repeat(64) });
    expect(await s.tokens.get(t.id)).toEqual(t);
    await s.tokens.revoke(t.id);
    expect((await s.tokens.get(t.id))?.revokedAt).toBeInstanceOf(Date);
    expect(await s.tokens.get('missing')).toBeNull();
  });
}
