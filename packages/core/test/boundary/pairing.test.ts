import { describe, expect, it } from 'vitest';
import { codeIn, dm, useGate } from './gate-fixture.js';

const MAIN = 'webhook:main';

describe('BoundaryService: pairing flood caps', () => {
  const world = useGate({ [MAIN]: { dmPolicy: 'pairing', pairingRole: 'member' } }, { maxHeld: 2, maxPending: 2, maxHeldBytes: 2048, cooldown: 600_000 });

  it('holds at most maxHeld messages per request, tells the sender once that later ones are not kept, and audits it once', async () => {
    const gates: string[] = [];
    for (let i = 0; i < 5; i++) gates.push((await world.gate.accept(dm(MAIN, 'flood', `m${i}`))).gate!);
    expect(gates).toEqual(['pairing', 'held', 'refused', 'refused', 'refused']);
    const code = codeIn(world.notices[0]!.text)!;
    const texts = world.notices.map((n) => n.text);
    expect(texts).toHaveLength(3);
    expect(texts[2]).toBe(
      `This message was not kept: while pairing code ${code} waits for an operator, at most 2 messages (pairing.maxHeld) are kept. Later messages are not kept either; send them again once you are approved.`,
    );
    expect((await world.storage.pairing.get(code))?.heldCount).toBe(2);
    expect(await world.storage.audit.list({ action: 'gate.held_overflow', limit: 10 })).toHaveLength(1);
    expect(world.gate.counts(MAIN)).toMatchObject({ pairing: 1, held: 1, refused: 3 });
  });

  it('a first message over maxHeldBytes gets a code but is not kept, and the sender is told so', async () => {
    expect(await world.gate.accept(dm(MAIN, 'big', 'x'.repeat(4096)))).toMatchObject({ gate: 'pairing' });
    expect(world.notices[0]!.text).toContain('Your message was too large to keep (pairing.maxHeldBytes is 2048 bytes)');
    expect((await world.storage.pairing.list({ status: 'pending' }))[0]?.heldCount).toBe(0);
  });

  it('past maxPending the oldest request is withdrawn (its sender told, audited); asking again within the cooldown is refused', async () => {
    for (const sender of ['s1', 's2', 's3']) expect(await world.gate.accept(dm(MAIN, sender, 'hi'))).toMatchObject({ gate: 'pairing' });
    const pending = await world.storage.pairing.list({ status: 'pending' });
    expect(pending.map((r) => r.identity).sort()).toEqual(['webhook:s2', 'webhook:s3']);
    const withdrawn = world.notices.find((n) => n.conversation.id === 'dm-s1' && n.text.includes('withdrawn'));
    expect(withdrawn?.text).toMatch(/You can send a new message after 10 min to get a new code\.$/);
    const expired = await world.storage.audit.list({ action: 'pairing.expired', limit: 10 });
    expect(expired.map((row) => row.detail)).toEqual([expect.objectContaining({ identity: 'webhook:s1', discarded: 1 })]);

    expect(await world.gate.accept(dm(MAIN, 's1', 'again'))).toMatchObject({ gate: 'refused' });
    expect(world.notices.at(-1)!.text).toMatch(
      /^You asked for access recently, so this message was not kept\. You can try again in \d+ min \(pairing\.cooldown\)\.$/,
    );
    const refused = await world.storage.audit.list({ action: 'gate.refused', limit: 10 });
    expect(refused[0]?.detail).toEqual({ identity: 'webhook:s1', reason: 'pairing.cooldown: this identity asked for access recently' });
  });
});

describe('BoundaryService: approving, rejecting and expiring codes', () => {
  const world = useGate({ [MAIN]: { dmPolicy: 'pairing', pairingRole: 'member', rateLimit: { burst: 3, perMinute: 0.1 } } });

  async function pendingCode(sender: string, texts: string[]): Promise<string> {
    for (const text of texts) await world.gate.accept(dm(MAIN, sender, text));
    const notice = world.notices.find((n) => n.conversation.id === `dm-${sender}` && codeIn(n.text));
    return codeIn(notice!.text)!;
  }

  it('approval creates a principal at pairingRole, links the identity and answers the held messages as one turn, in order', async () => {
    const code = await pendingCode('gina', ['first', 'second']);
    const outcome = await world.gate.approve(code, { scopes: ['pairing'] }, 'operator:ops');
    expect(outcome).toMatchObject({ outcome: 'approved', answered: 2 });
    const principalId = outcome.outcome === 'approved' ? outcome.principalId : '';
    expect(await world.storage.principals.get(principalId)).toMatchObject({ name: 'gina', role: 'member' });
    expect((await world.storage.principals.byIdentity('webhook', 'gina'))?.id).toBe(principalId);
    expect(world.queued).toHaveLength(1);
    expect(world.queued[0]!.message).toMatchObject({ dedupeKey: `pairing:${code}`, text: 'first\n\nsecond', principalId });
    expect(world.queued[0]!.route.key).toMatchObject({ scope: 'dm', principalId });
    expect(world.notices.at(-1)!.text).toBe('You have been approved. Answering your message now.');
    expect(await world.gate.list({ status: 'approved' })).toEqual([expect.objectContaining({ code, principalId })]);
    // The turn was charged to the sender's bucket (3 tokens: two messages and the turn).
    expect(await world.gate.accept(dm(MAIN, 'gina', 'now?'))).toMatchObject({ gate: 'rate_limited' });
    expect(await world.gate.approve(code, { scopes: ['pairing'] }, 'operator:ops')).toEqual({ outcome: 'not_pending' });
  });

  it('a held message delivered again after approval answers as the approved turn, queuing nothing', async () => {
    const first = dm(MAIN, 'hank', 'kept');
    await world.gate.accept(first);
    const code = codeIn(world.notices[0]!.text)!;
    await world.gate.approve(code, { scopes: ['pairing'] }, 'operator:ops');
    const turnId = (await world.storage.turns.seen('webhook', 'main', `pairing:${code}`))?.turnId;
    expect(await world.gate.accept(first)).toMatchObject({ gate: 'admitted', duplicate: true, turnId });
    expect(world.queued).toHaveLength(1);
  });

  it('refuses approvals the operator may not give, and unknown codes and principals', async () => {
    const code = await pendingCode('ivan', ['hi']);
    expect(await world.gate.approve(code, { role: 'admin', scopes: ['pairing'] }, 'operator:ops')).toMatchObject({ outcome: 'forbidden' });
    expect(await world.gate.approve(code, { principalId: 'p-1', scopes: ['pairing'] }, 'operator:ops')).toMatchObject({ outcome: 'forbidden' });
    expect(await world.gate.approve(code, { principalId: 'nobody', scopes: ['admin'] }, 'operator:ops')).toEqual({ outcome: 'unknown_principal' });
    expect(await world.gate.approve('NOSUCHCD', { scopes: ['admin'] }, 'operator:ops')).toEqual({ outcome: 'not_found' });
    expect(world.queued).toEqual([]);
    expect((await world.storage.pairing.get(code))?.status).toBe('pending');
  });

  it('an admin may link the request to an existing principal; the link is audited as privileged', async () => {
    const existing = await world.storage.principals.create({ name: 'judy', role: 'admin' });
    const code = await pendingCode('judy-phone', ['from my phone']);
    expect(await world.gate.approve(code, { principalId: existing.id, scopes: ['admin'] }, 'operator:root')).toMatchObject({
      outcome: 'approved',
      principalId: existing.id,
    });
    expect((await world.storage.principals.byIdentity('webhook', 'judy-phone'))?.id).toBe(existing.id);
    const [linked] = await world.storage.audit.list({ action: 'pairing.linked', limit: 10 });
    expect(linked).toMatchObject({ actor: 'operator:root', target: code, detail: { principalId: existing.id, role: 'admin', privileged: true } });
    expect(world.queued[0]!.message.principalId).toBe(existing.id);
  });

  it('rejection discards the held messages and tells the sender; only once', async () => {
    const code = await pendingCode('karl', ['hi']);
    expect(await world.gate.reject(code, 'operator:ops')).toBe('rejected');
    expect(world.notices.at(-1)!.text).toBe('Your access request was declined, and your message was discarded.');
    expect(await world.storage.pairing.held(code)).toEqual([]);
    expect(await world.gate.reject(code, 'operator:ops')).toBe('not_pending');
    expect(await world.gate.reject('NOSUCHCD', 'operator:ops')).toBe('not_found');
    expect(world.queued).toEqual([]);
  });
});

describe('BoundaryService: code expiry', () => {
  // Codes that are already due when issued: the sweep's work is deterministic.
  const world = useGate({ [MAIN]: { dmPolicy: 'pairing' } }, { codeTtl: 0 });

  it('expire() expires due codes once, audits them and tells each sender', async () => {
    await world.gate.accept(dm(MAIN, 'lena', 'hi'));
    const code = codeIn(world.notices[0]!.text)!;
    expect(await world.gate.expire()).toBe(1);
    expect(world.notices.at(-1)!.text).toBe(
      `Your pairing code ${code} expired before an operator approved it, so your message was discarded. Send a new message to get a new code.`,
    );
    expect((await world.storage.pairing.get(code))?.status).toBe('expired');
    expect(await world.storage.audit.list({ action: 'pairing.expired', limit: 10 })).toEqual([
      expect.objectContaining({ target: code, detail: expect.objectContaining({ reason: 'pairing.codeTtl passed', discarded: 1 }) }),
    ]);
    expect(await world.gate.expire()).toBe(0);
    expect(await world.gate.approve(code, { scopes: ['admin'] }, 'operator:ops')).toEqual({ outcome: 'not_pending' });
  });
});
