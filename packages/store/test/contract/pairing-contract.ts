import type { NewPairingRequest, PairingLimits } from '@switchboard/core';
import { expect, it } from 'vitest';
import { inbound, type StorageRef } from './fixtures.js';

const LIMITS: PairingLimits = { maxPending: 2, maxHeld: 3, maxHeldBytes: 4096, cooldown: 60_000 };
let seq = 0;

/** A new request of `identity` on webhook:main, carrying message `key` (text `text`). */
const ask = (identity: string, key: string, text = `hello ${key}`): NewPairingRequest => ({
  code: `CODE${String(++seq).padStart(4, '2')}`.slice(0, 8),
  channel: 'webhook',
  account: 'main',
  identity,
  displayName: null,
  conversation: { channel: 'webhook', account: 'main', id: `dm-${identity}`, kind: 'dm' },
  message: inbound(key, { channel: 'webhook', account: 'main', text, sender: { identity, isBot: false } }),
  expiresAt: new Date(Date.now() + 3_600_000),
});

/** Pairing requests and their held messages (one row each, bounded). */
export function pairingContract(store: StorageRef): void {
  it('holds messages in order up to maxHeld, tells once about the overflow, and holds a redelivery once', async () => {
    const s = store();
    const first = await s.pairing.requestOrHold(ask('webhook:a', 'm1'), LIMITS);
    expect(first).toMatchObject({ kind: 'created', evicted: null, kept: true, request: { heldCount: 1, status: 'pending' } });
    const code = first.kind === 'created' ? first.request.code : '';
    expect((await s.pairing.requestOrHold(ask('webhook:a', 'm2'), LIMITS)).kind).toBe('held');
    expect((await s.pairing.requestOrHold(ask('webhook:a', 'm2'), LIMITS)).kind).toBe('duplicate');
    expect(await s.pairing.requestOrHold(ask('webhook:a', 'm3'), LIMITS)).toMatchObject({ kind: 'held', request: { heldCount: 3 } });
    expect(await s.pairing.requestOrHold(ask('webhook:a', 'm4'), LIMITS)).toMatchObject({ kind: 'overflow', limit: 'maxHeld', first: true });
    expect(await s.pairing.requestOrHold(ask('webhook:a', 'm5'), LIMITS)).toMatchObject({ kind: 'overflow', limit: 'maxHeld', first: false });
    expect((await s.pairing.held(code)).map((m) => m.dedupeKey)).toEqual(['m1', 'm2', 'm3']);
    expect((await s.pairing.held(code))[0]!.receivedAt).toBeInstanceOf(Date);
    expect((await s.pairing.heldSeen('webhook', 'main', 'webhook:a', 'm2'))?.code).toBe(code);
    expect(await s.pairing.heldSeen('webhook', 'main', 'webhook:a', 'm4')).toBeNull();
    expect(await s.pairing.heldSeen('webhook', 'main', 'webhook:other', 'm2')).toBeNull();
  });

  it('bounds the held bytes: a message past maxHeldBytes is not kept, a first message too big opens a request without it', async () => {
    const s = store();
    const big = 'x'.repeat(2000);
    const r = await s.pairing.requestOrHold(ask('webhook:b', 'b1', big), LIMITS);
    expect(r.kind).toBe('created');
    expect(await s.pairing.requestOrHold(ask('webhook:b', 'b2', big), LIMITS)).toMatchObject({ kind: 'overflow', limit: 'maxHeldBytes', first: true });
    // Once one was not kept, later ones are not either, small or not: the held ones stay in order.
    expect(await s.pairing.requestOrHold(ask('webhook:b', 'b3', 'small'), LIMITS)).toMatchObject({ kind: 'overflow', limit: 'maxHeldBytes', first: false });
    const code = r.kind === 'created' ? r.request.code : '';
    expect(await s.pairing.get(code)).toMatchObject({ heldCount: 1 });
    expect((await s.pairing.get(code))!.heldBytes).toBeLessThanOrEqual(LIMITS.maxHeldBytes);
    const huge = await s.pairing.requestOrHold(ask('webhook:c', 'c1', 'y'.repeat(5000)), LIMITS);
    expect(huge).toMatchObject({ kind: 'created', kept: false, request: { heldCount: 0 } });
    // Its sender was told already (with the code), so a later overflow is not "first".
    expect(await s.pairing.requestOrHold(ask('webhook:c', 'c2', 'y'.repeat(5000)), LIMITS)).toMatchObject({ kind: 'overflow', first: false });
  });

  it('expires the oldest pending request when the slots are full, and keeps each identity to its cooldown', async () => {
    const s = store();
    const a = await s.pairing.requestOrHold(ask('webhook:p1', 'p1'), LIMITS);
    await s.pairing.requestOrHold(ask('webhook:p2', 'p2'), LIMITS);
    const third = await s.pairing.requestOrHold(ask('webhook:p3', 'p3'), LIMITS);
    const oldCode = a.kind === 'created' ? a.request.code : '';
    expect(third).toMatchObject({ kind: 'created', evicted: { code: oldCode, identity: 'webhook:p1', status: 'expired', heldCount: 1 } });
    expect((await s.pairing.get(oldCode))?.status).toBe('expired');
    // The discarded message is gone.
    expect(await s.pairing.held(oldCode)).toEqual([]);
    expect((await s.pairing.list({ status: 'pending' })).map((p) => p.identity).sort()).toEqual(['webhook:p2', 'webhook:p3']);
    const again = await s.pairing.requestOrHold(ask('webhook:p1', 'p1b'), LIMITS);
    expect(again.kind).toBe('cooldown');
    if (again.kind === 'cooldown') expect(again.retryAt.getTime()).toBeGreaterThan(Date.now());
    expect((await s.pairing.requestOrHold(ask('webhook:p1', 'p1c'), { ...LIMITS, cooldown: 0, maxPending: 10 })).kind).toBe('created');
  });

  it('decide: a rejected request loses its held messages, an approved one keeps dedupe keys after forgetHeld', async () => {
    const s = store();
    const r = await s.pairing.requestOrHold(ask('webhook:d', 'd1'), LIMITS);
    const code = r.kind === 'created' ? r.request.code : '';
    expect(await s.pairing.decide(code, 'approved', 'operator:x', null)).toBe(true);
    expect(await s.pairing.decide(code, 'rejected', 'operator:x')).toBe(false);
    expect((await s.pairing.held(code)).map((m) => m.text)).toEqual(['hello d1']);
    await s.pairing.forgetHeld(code);
    expect(await s.pairing.held(code)).toEqual([]);
    expect(await s.pairing.heldSeen('webhook', 'main', 'webhook:d', 'd1')).toMatchObject({ code, status: 'approved', heldCount: 1 });

    const e = await s.pairing.requestOrHold(ask('webhook:e', 'e1'), LIMITS);
    const ecode = e.kind === 'created' ? e.request.code : '';
    expect(await s.pairing.decide(ecode, 'rejected', 'operator:x')).toBe(true);
    expect(await s.pairing.get(ecode)).toMatchObject({ status: 'rejected', heldCount: 0 });
    expect(await s.pairing.heldSeen('webhook', 'main', 'webhook:e', 'e1')).toBeNull();
  });

  it('audit.updateDetail replaces one entry’s detail; an unknown id is false', async () => {
    const s = store();
    const id = await s.audit.append({ actor: 'gateway', action: 'gate.rate_limited', target: 'webhook:main', detail: { identity: 'webhook:z', count: 1 } });
    expect(await s.audit.updateDetail(id, { identity: 'webhook:z', count: 7 })).toBe(true);
    expect((await s.audit.list({ action: 'gate.rate_limited' }))[0]).toMatchObject({ id, detail: { identity: 'webhook:z', count: 7 } });
    expect(await s.audit.updateDetail(id + 1000, {})).toBe(false);
  });
}
