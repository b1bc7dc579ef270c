import fc from 'fast-check';
import type { MemoryScopeRef } from '@switchboard/core';
import { expect, it } from 'vitest';
import type { StorageRef } from './fixtures.js';

const mine = (principalId: string): MemoryScopeRef => ({ scope: 'private', principalId });
const team = (agentId: string): MemoryScopeRef => ({ scope: 'team', agentId });

/** Long-term memories: scoped reads, ranked and bounded full-text search that never throws, deletes. */
export function memoryContract(store: StorageRef): void {
  it('saves private and team memories and reads each only through its own scope', async () => {
    const s = store();
    const a = await s.memories.save({ scope: 'private', principalId: 'alice', text: 'My cat is called Miso', tags: ['pets'], createdBy: 'alice' });
    const b = await s.memories.save({ scope: 'private', principalId: 'bob', text: 'My cat is called Tom', tags: [], createdBy: 'bob' });
    const t = await s.memories.save({ scope: 'team', agentId: 'main', text: 'The office cat is Felix', tags: ['office'], createdBy: 'alice' });
    await s.memories.save({ scope: 'team', agentId: 'other', text: 'Another agent’s cat', tags: [], createdBy: null });
    expect(a.id).toMatch(/^mem_[0-9a-f]{12}$/);
    expect(new Set([a.id, b.id, t.id]).size).toBe(3);
    expect(await s.memories.get(a.id)).toMatchObject({ scope: 'private', principalId: 'alice', agentId: null, text: 'My cat is called Miso', tags: ['pets'] });
    expect((await s.memories.get(a.id))?.createdAt).toBeInstanceOf(Date);
    expect(await s.memories.get('mem_000000000000')).toBeNull();

    const hits = await s.memories.search({ text: 'cat', scopes: [mine('alice'), team('main')], limit: 10 });
    expect(hits.map((h) => h.memory.id).sort()).toEqual([a.id, t.id].sort());
    expect((await s.memories.search({ text: 'cat', scopes: [mine('bob')], limit: 10 })).map((h) => h.memory.id)).toEqual([b.id]);
    expect(await s.memories.search({ text: 'cat', scopes: [], limit: 10 })).toEqual([]);
    expect((await s.memories.list([mine('alice')])).map((m) => m.id)).toEqual([a.id]);
    expect(await s.memories.count([mine('alice'), team('main')])).toBe(2);
    expect(await s.memories.count([])).toBe(0);
    // Tags are searchable too.
    expect((await s.memories.search({ text: 'office', scopes: [team('main')], limit: 10 })).map((h) => h.memory.id)).toEqual([t.id]);
  });

  it('ranks the better match first, matches word prefixes and diacritics, and bounds the results', async () => {
    const s = store();
    const weak = await s.memories.save({ scope: 'private', principalId: 'p', text: 'coffee once', tags: [], createdBy: 'p' });
    const strong = await s.memories.save({
      scope: 'private',
      principalId: 'p',
      text: 'coffee coffee coffee: black coffee every morning',
      tags: [],
      createdBy: 'p',
    });
    const ranked = await s.memories.search({ text: 'coffee morning', scopes: [mine('p')], limit: 10 });
    expect(ranked.map((h) => h.memory.id)).toEqual([strong.id, weak.id]);
    expect(ranked[0]!.rank).toBeLessThanOrEqual(ranked[1]!.rank);
    expect((await s.memories.search({ text: 'coff', scopes: [mine('p')], limit: 10 })).length).toBe(2);
    const cafe = await s.memories.save({ scope: 'private', principalId: 'p', text: 'Zoë likes the café', tags: [], createdBy: 'p' });
    expect((await s.memories.search({ text: 'zoe cafe', scopes: [mine('p')], limit: 10 })).map((h) => h.memory.id)).toEqual([cafe.id]);
    for (let i = 0; i < 60; i++) await s.memories.save({ scope: 'private', principalId: 'p', text: `note ${i} about tea`, tags: [], createdBy: 'p' });
    expect(await s.memories.search({ text: 'tea', scopes: [mine('p')], limit: 3 })).toHaveLength(3);
    expect(await s.memories.search({ text: 'tea', scopes: [mine('p')], limit: 1000 })).toHaveLength(50);
    expect(await s.memories.list([mine('p')], { limit: 1000 })).toHaveLength(50);
    expect(await s.memories.count([mine('p')])).toBe(63);
  });

  it('never throws on hostile query text: FTS5 syntax is searched as plain words', async () => {
    const s = store();
    const m = await s.memories.save({ scope: 'private', principalId: 'p', text: 'near the AND gate, column text', tags: ['x'], createdBy: 'p' });
    for (const text of ['"', '""', 'NEAR(', 'AND', 'a OR', '*', '^near', 'text:gate', '(near', 'NOT', '-', '\u0000', '\uD800', '   ', '']) {
      await expect(s.memories.search({ text, scopes: [mine('p')], limit: 5 })).resolves.toBeInstanceOf(Array);
    }
    expect((await s.memories.search({ text: 'NEAR(gate AND) text:', scopes: [mine('p')], limit: 5 })).map((h) => h.memory.id)).toEqual([m.id]);
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: -5, max: 100 }), async (text, limit) => {
        const hits = await s.memories.search({ text, scopes: [mine('p')], limit });
        expect(hits.length).toBeLessThanOrEqual(50);
      }),
      { numRuns: 300 },
    );
  });

  it('deletes one memory, and every private memory of a principal (their team memories stay)', async () => {
    const s = store();
    const a1 = await s.memories.save({ scope: 'private', principalId: 'alice', text: 'one', tags: [], createdBy: 'alice' });
    await s.memories.save({ scope: 'private', principalId: 'alice', text: 'two', tags: [], createdBy: 'alice' });
    const b = await s.memories.save({ scope: 'private', principalId: 'bob', text: 'three', tags: [], createdBy: 'bob' });
    const t = await s.memories.save({ scope: 'team', agentId: 'main', text: 'four', tags: [], createdBy: 'alice' });
    expect(await s.memories.delete(a1.id)).toBe(true);
    expect(await s.memories.delete(a1.id)).toBe(false);
    expect(await s.memories.search({ text: 'one', scopes: [mine('alice')], limit: 5 })).toEqual([]);
    expect(await s.memories.deleteOfPrincipal('alice')).toBe(1);
    expect(await s.memories.deleteOfPrincipal('alice')).toBe(0);
    expect(await s.memories.get(b.id)).not.toBeNull();
    expect(await s.memories.get(t.id)).not.toBeNull();
    expect(await s.memories.search({ text: 'two', scopes: [mine('alice')], limit: 5 })).toEqual([]);
  });
}
