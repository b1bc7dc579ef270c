import { expect, it } from 'vitest';
import type { StorageRef } from './fixtures.js';

/** Operators' offer-switches: one per tool and exact scope, the gateway's without an id. */
export function offerSwitchContract(store: StorageRef): void {
  it('stores one switch per tool and scope, lists them oldest first and removes only the exact scope', async () => {
    const s = store();
    expect(await s.offerSwitches.list()).toEqual([]);
    expect(await s.offerSwitches.put({ tool: 'exec', scopeKind: 'principal', scopeId: 'p1', createdBy: 'operator:a' })).toBe(true);
    expect(await s.offerSwitches.put({ tool: 'exec', scopeKind: 'principal', scopeId: 'p1', createdBy: 'operator:b' })).toBe(false);
    expect(await s.offerSwitches.put({ tool: 'exec', scopeKind: 'gateway', scopeId: null, createdBy: 'operator:a' })).toBe(true);
    expect(await s.offerSwitches.put({ tool: 'exec', scopeKind: 'role', scopeId: 'member', createdBy: 'operator:a' })).toBe(true);
    expect(await s.offerSwitches.put({ tool: 'write_file', scopeKind: 'principal', scopeId: 'p1', createdBy: 'operator:a' })).toBe(true);
    expect(await s.offerSwitches.put({ tool: 'exec', scopeKind: 'principal', scopeId: '__proto__', createdBy: 'operator:a' })).toBe(true);

    const list = await s.offerSwitches.list();
    expect(list.map((o) => [o.tool, o.scopeKind, o.scopeId, o.createdBy])).toEqual([
      ['exec', 'principal', 'p1', 'operator:a'],
      ['exec', 'gateway', null, 'operator:a'],
      ['exec', 'role', 'member', 'operator:a'],
      ['write_file', 'principal', 'p1', 'operator:a'],
      ['exec', 'principal', '__proto__', 'operator:a'],
    ]);
    expect(list[0]!.createdAt).toBeInstanceOf(Date);

    expect(await s.offerSwitches.remove('exec', 'principal', 'p1')).toBe(true);
    expect(await s.offerSwitches.remove('exec', 'principal', 'p1')).toBe(false);
    expect(await s.offerSwitches.remove('exec', 'principal', 'p2')).toBe(false);
    expect(await s.offerSwitches.remove('exec', 'gateway', null)).toBe(true);
    expect((await s.offerSwitches.list()).map((o) => `${o.tool} ${o.scopeKind}:${o.scopeId}`)).toEqual([
      'exec role:member',
      'write_file principal:p1',
      'exec principal:__proto__',
    ]);
  });
}
