import { describe, expect, it } from 'vitest';
import { AccessEvents, isDemotion, type AccessChange } from '../src/access-events.js';

describe('AccessEvents', () => {
  it('delivers every change to every subscriber, synchronously, until it unsubscribes', () => {
    const bus = new AccessEvents();
    const a: AccessChange[] = [];
    const b: AccessChange[] = [];
    const offA = bus.on((c) => a.push(c));
    bus.on((c) => b.push(c));
    bus.emit({ type: 'token_revoked', tokenId: 't1' });
    expect(a).toEqual([{ type: 'token_revoked', tokenId: 't1' }]);
    offA();
    bus.emit({ type: 'principal_removed', principalId: 'p1' });
    expect(a).toHaveLength(1);
    expect(b.map((c) => c.type)).toEqual(['token_revoked', 'principal_removed']);
  });

  it('a throwing listener is reported and does not stop the others', () => {
    const errors: unknown[] = [];
    const bus = new AccessEvents((err) => errors.push(err));
    const seen: string[] = [];
    bus.on(() => {
      throw new Error('boom');
    });
    bus.on((c) => seen.push(c.type));
    bus.emit({ type: 'principal_demoted', principalId: 'p', from: 'admin', to: 'member' });
    expect(seen).toEqual(['principal_demoted']);
    expect(errors).toHaveLength(1);
  });

  it('knows a demotion from a promotion', () => {
    expect(isDemotion('owner', 'admin')).toBe(true);
    expect(isDemotion('member', 'guest')).toBe(true);
    expect(isDemotion('guest', 'member')).toBe(false);
    expect(isDemotion('admin', 'admin')).toBe(false);
  });
});
