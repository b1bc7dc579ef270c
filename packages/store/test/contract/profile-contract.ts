import { expect, it } from 'vitest';
import type { StorageRef } from './fixtures.js';

/** People's profiles (one per principal, deleted with it) and approved instruction-file hashes (one per workspace file). */
export function profileContract(store: StorageRef): void {
  it('stores one profile per existing principal, replaces it whole, clears it with {} and drops it with the principal', async () => {
    const s = store();
    const ada = await s.principals.create({ name: 'ada', role: 'member' });
    const bob = await s.principals.create({ name: 'bob', role: 'member' });
    expect(await s.profiles.get(ada.id)).toBeNull();
    expect(await s.profiles.put('nobody', { name: 'X' }, 'operator:a')).toBe(false);
    expect(await s.profiles.get('nobody')).toBeNull();

    expect(await s.profiles.put(ada.id, { name: 'Ada', timezone: 'Europe/Berlin', preferences: 'short answers\nno emoji' }, 'principal:ada')).toBe(true);
    const stored = await s.profiles.get(ada.id);
    expect(stored?.profile).toEqual({ name: 'Ada', timezone: 'Europe/Berlin', preferences: 'short answers\nno emoji' });
    expect(stored?.updatedBy).toBe('principal:ada');
    expect(stored?.updatedAt).toBeInstanceOf(Date);
    expect(await s.profiles.get(bob.id)).toBeNull();

    // A put replaces the whole profile: fields left out are gone; empty strings are not stored.
    expect(await s.profiles.put(ada.id, { pronouns: 'she/her', name: '' }, 'operator:root')).toBe(true);
    expect(await s.profiles.get(ada.id)).toMatchObject({ profile: { pronouns: 'she/her' }, updatedBy: 'operator:root' });

    // Only known string fields are kept, whatever the caller passes.
    const hostile = JSON.parse('{"__proto__": {"polluted": "yes"}, "language": "de", "extra": "x", "name": 5}') as Record<string, string>;
    expect(await s.profiles.put(bob.id, hostile, 'operator:root')).toBe(true);
    expect((await s.profiles.get(bob.id))?.profile).toEqual({ language: 'de' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();

    expect(await s.profiles.put(ada.id, {}, 'operator:root')).toBe(true);
    expect(await s.profiles.get(ada.id)).toBeNull();

    await s.principals.remove(bob.id);
    expect(await s.profiles.get(bob.id)).toBeNull();
  });

  it('keeps the approved sha256 of each workspace file, replacing it on approve', async () => {
    const s = store();
    expect(await s.instructionFiles.approved('/w/a', 'AGENTS.md')).toBeNull();
    await s.instructionFiles.approve('/w/a', 'AGENTS.md', 'a'.repeat(64));
    await s.instructionFiles.approve('/w/a', 'docs/AGENTS.md', 'b'.repeat(64));
    await s.instructionFiles.approve('/w/b', 'AGENTS.md', 'c'.repeat(64));
    expect(await s.instructionFiles.approved('/w/a', 'AGENTS.md')).toBe('a'.repeat(64));
    expect(await s.instructionFiles.approved('/w/a', 'docs/AGENTS.md')).toBe('b'.repeat(64));
    expect(await s.instructionFiles.approved('/w/b', 'AGENTS.md')).toBe('c'.repeat(64));
    await s.instructionFiles.approve('/w/a', 'AGENTS.md', 'd'.repeat(64));
    expect(await s.instructionFiles.approved('/w/a', 'AGENTS.md')).toBe('d'.repeat(64));
    expect(await s.instructionFiles.approved('/w/a', '__proto__')).toBeNull();
  });
}
