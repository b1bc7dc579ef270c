import { describe, expect, it } from 'vitest';
import { codeIn, dm, roomMessage, settingsOf, useGate } from './gate-fixture.js';

const MAIN = 'webhook:main';

async function linkedPrincipal(world: ReturnType<typeof useGate>, name: string): Promise<string> {
  const principal = await world.storage.principals.create({ name, role: 'member' });
  await world.storage.principals.linkIdentity(principal.id, 'webhook', name);
  return principal.id;
}

describe('BoundaryService: direct messages', () => {
  const world = useGate({ [MAIN]: { dmPolicy: 'pairing' } });

  it('admits a linked principal and queues its turn under the person’s DM session; a redelivery queues nothing', async () => {
    const alice = await linkedPrincipal(world, 'alice');
    const message = dm(MAIN, 'alice', 'hello');
    const first = await world.gate.accept(message);
    expect(first).toMatchObject({ gate: 'admitted', duplicate: false });
    expect(first.turnId).toEqual(expect.any(String));
    expect(world.queued).toHaveLength(1);
    expect(world.queued[0]!.message.principalId).toBe(alice);
    expect(world.queued[0]!.route).toEqual({
      agentId: 'default',
      key: { agent: 'default', channel: 'webhook', account: 'main', scope: 'dm', principalId: alice },
      clientId: message.platformId,
    });
    const again = await world.gate.accept(message);
    expect(again).toMatchObject({ gate: 'admitted', duplicate: true, turnId: first.turnId });
    expect(world.queued).toHaveLength(1);
    expect(world.notices).toEqual([]);
    expect(world.gate.counts(MAIN)).toMatchObject({ admitted: 1, pairing: 0 });
  });

  it('an unknown DM gets a pairing code by notice and is held; its redelivery is not noticed twice; the next is held with a notice', async () => {
    const first = dm(MAIN, 'stranger', 'who are you?');
    expect(await world.gate.accept(first)).toMatchObject({ gate: 'pairing', duplicate: false, turnId: null });
    expect(world.notices).toHaveLength(1);
    expect(world.notices[0]).toMatchObject({ channelId: MAIN, conversation: first.conversation });
    const code = codeIn(world.notices[0]!.text);
    expect(code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    expect(world.notices[0]!.text).toContain('Your message is kept');
    const [request] = await world.storage.pairing.list({ status: 'pending' });
    expect(request).toMatchObject({ code, identity: 'webhook:stranger', heldCount: 1 });

    expect(await world.gate.accept(first)).toMatchObject({ gate: 'held', duplicate: true });
    expect(world.notices).toHaveLength(1);

    expect(await world.gate.accept(dm(MAIN, 'stranger', 'still there?'))).toMatchObject({ gate: 'held', duplicate: false });
    expect(world.notices.at(-1)!.text).toBe(`Still waiting for an operator to approve pairing code ${code}. Your message is kept (2 of at most 5).`);
    expect(world.queued).toEqual([]);
    expect(world.gate.counts(MAIN)).toMatchObject({ pairing: 1, held: 1, admitted: 0 });
    const audited = await world.storage.audit.list({ action: 'gate.pairing', limit: 10 });
    expect(audited.map((row) => row.detail)).toEqual([{ identity: 'webhook:stranger', code }]);
  });

  it('a notice that cannot be delivered does not fail the gate', async () => {
    world.breakNotify();
    expect(await world.gate.accept(dm(MAIN, 'stranger', 'hi'))).toMatchObject({ gate: 'pairing' });
    expect(world.notices).toEqual([]);
  });

  it('ignores bots, without a notice or a token', async () => {
    const bot = dm(MAIN, 'robot', 'beep', { sender: { identity: 'webhook:robot', isBot: true } });
    expect(await world.gate.accept(bot)).toMatchObject({ gate: 'ignored' });
    expect(world.notices).toEqual([]);
    expect(await world.storage.pairing.list({})).toEqual([]);
  });
});

describe('BoundaryService: allowlisted and refused DMs', () => {
  const world = useGate({ [MAIN]: { dmPolicy: 'allowlist', allowFrom: ['bob'], pairingRole: 'guest' }, 'webhook:off': { dmPolicy: 'disabled' } });

  it('links an allowlisted sender to one new principal (at pairingRole), even for concurrent messages', async () => {
    const results = await Promise.all([world.gate.accept(dm(MAIN, 'bob', 'one')), world.gate.accept(dm(MAIN, 'bob', 'two'))]);
    expect(results.map((r) => r.gate)).toEqual(['admitted', 'admitted']);
    const principal = await world.storage.principals.byIdentity('webhook', 'bob');
    expect(principal).toMatchObject({ name: 'bob', role: 'guest' });
    expect(world.queued.map((q) => q.message.principalId)).toEqual([principal!.id, principal!.id]);
    expect(await world.storage.audit.list({ action: 'principal.created', limit: 10 })).toHaveLength(1);
  });

  it('refuses a sender off the allowlist with a notice and an audit row', async () => {
    expect(await world.gate.accept(dm(MAIN, 'mallory', 'let me in'))).toMatchObject({ gate: 'refused' });
    expect(world.notices.map((n) => n.text)).toEqual(['You are not on this assistant’s allowlist. Ask its operator for access.']);
    const [row] = await world.storage.audit.list({ action: 'gate.refused', limit: 10 });
    expect(row).toMatchObject({ target: MAIN, detail: { identity: 'webhook:mallory', reason: 'sender not on the allowlist' } });
    expect(world.queued).toEqual([]);
  });

  it('refuses every DM when DMs are disabled, and meets an unknown account with the locked-down policy', async () => {
    expect(await world.gate.accept(dm('webhook:off', 'bob', 'hi'))).toMatchObject({ gate: 'refused' });
    expect(world.notices.at(-1)!.text).toBe('Direct messages to this assistant are disabled right now.');
    expect(await world.gate.policy('webhook:nowhere')).toBeNull();
    expect(await world.gate.accept(dm('webhook:nowhere', 'bob', 'hi'))).toMatchObject({ gate: 'refused' });
    expect(await world.gate.accept(roomMessage('webhook:nowhere', 'room-1', 'bob', 'hi'))).toMatchObject({ gate: 'ignored' });
    expect(world.queued).toEqual([]);
  });
});

describe('BoundaryService: rooms', () => {
  const world = useGate({
    [MAIN]: {
      groupPolicy: 'allowlist',
      groups: {
        'room-1': { requireMention: true, allowFrom: [], denyTools: [] },
        'room-2': { requireMention: false, allowFrom: ['carol'], denyTools: [] },
      },
    },
    'webhook:open': { groupPolicy: 'open', requireMention: false },
    'webhook:closed': { groupPolicy: 'disabled' },
  });

  it('admits a mention in an allowlisted room under the room’s (thread’s) shared session, without a principal', async () => {
    expect(await world.gate.accept(roomMessage(MAIN, 'room-1', 'dave', 'hi @bot', { thread: 't1' }))).toMatchObject({ gate: 'admitted' });
    expect(world.queued[0]!.message.principalId).toBeUndefined();
    expect(world.queued[0]!.route.key).toEqual({ agent: 'default', channel: 'webhook', account: 'main', scope: 'room', conversation: 'room-1', thread: 't1' });
    // Room access never creates a principal.
    expect(await world.storage.principals.byIdentity('webhook', 'dave')).toBeNull();
  });

  it('ignores, silently: rooms off the allowlist, no mention where one is required, senders a room does not allow, disabled rooms', async () => {
    const ignored = [
      roomMessage(MAIN, 'room-9', 'dave', 'hi'),
      roomMessage(MAIN, 'room-1', 'dave', 'hi', { mentioned: false }),
      roomMessage(MAIN, 'room-2', 'dave', 'hi', { mentioned: false }),
      roomMessage('webhook:closed', 'room-1', 'dave', 'hi'),
    ];
    for (const message of ignored) expect(await world.gate.accept(message)).toMatchObject({ gate: 'ignored' });
    expect(world.notices).toEqual([]);
    expect(world.queued).toEqual([]);
    expect(world.gate.counts(MAIN).ignored).toBe(3);
    expect(await world.gate.accept(roomMessage(MAIN, 'room-2', 'carol', 'hi', { mentioned: false }))).toMatchObject({ gate: 'admitted' });
    expect(await world.gate.accept(roomMessage('webhook:open', 'any-room', 'dave', 'hi', { mentioned: false }))).toMatchObject({ gate: 'admitted' });
    expect(world.queued.map((q) => q.route.key)).toEqual([
      expect.objectContaining({ scope: 'room', account: 'main', conversation: 'room-2' }),
      expect.objectContaining({ scope: 'room', account: 'open', conversation: 'any-room' }),
    ]);
  });
});

describe('BoundaryService: rate limit', () => {
  // Two tokens, refilled at one per ten minutes: nothing refills while the test runs.
  const world = useGate({ [MAIN]: { dmPolicy: 'pairing', rateLimit: { burst: 2, perMinute: 0.1 } } });

  it('past the burst, messages are rate limited: told once, audited as one counted row, nothing queued', async () => {
    await linkedPrincipal(world, 'alice');
    const gates: string[] = [];
    for (let i = 0; i < 6; i++) gates.push((await world.gate.accept(dm(MAIN, 'alice', `m${i}`))).gate!);
    expect(gates).toEqual(['admitted', 'admitted', 'rate_limited', 'rate_limited', 'rate_limited', 'rate_limited']);
    expect(world.queued).toHaveLength(2);
    expect(world.notices.map((n) => n.text)).toEqual([
      'You are sending messages faster than this assistant accepts. Please slow down and try again in a minute.',
    ]);
    expect(world.gate.counts(MAIN)).toMatchObject({ admitted: 2, rate_limited: 4 });
    await world.gate.stop();
    const rows = await world.storage.audit.list({ action: 'gate.rate_limited', limit: 10 });
    expect(rows.map((row) => ({ target: row.target, ...(row.detail as object) }))).toEqual([
      expect.objectContaining({ target: MAIN, identity: 'webhook:alice', count: 4 }),
    ]);
  });

  it('each sender has their own bucket, and pairing notices cost a token too', async () => {
    for (let i = 0; i < 3; i++) await world.gate.accept(dm(MAIN, 'stranger', `s${i}`));
    expect(world.gate.counts(MAIN)).toMatchObject({ pairing: 1, held: 1, rate_limited: 1 });
    await linkedPrincipal(world, 'alice');
    expect(await world.gate.accept(dm(MAIN, 'alice', 'mine is full'))).toMatchObject({ gate: 'admitted' });
  });
});

describe('BoundaryService: settings and overrides', () => {
  const world = useGate({ [MAIN]: { dmPolicy: 'allowlist', allowFrom: [] } });

  it('update() puts new settings in force from the next message', async () => {
    expect(await world.gate.accept(dm(MAIN, 'erin', 'one'))).toMatchObject({ gate: 'refused' });
    world.gate.update(settingsOf({ [MAIN]: { dmPolicy: 'allowlist', allowFrom: ['erin'] } }));
    expect(await world.gate.accept(dm(MAIN, 'erin', 'two'))).toMatchObject({ gate: 'admitted' });
    expect(await world.gate.policy(MAIN)).toMatchObject({ allowFrom: ['erin'], groupPolicy: 'allowlist', rateLimit: { burst: 10, perMinute: 20 } });
    // An account the new settings no longer have is unknown from then on.
    world.gate.update(settingsOf({}));
    expect(await world.gate.policy(MAIN)).toBeNull();
    expect(await world.gate.accept(dm(MAIN, 'frank', 'three'))).toMatchObject({ gate: 'refused' });
  });

  it('an operator override wins over the settings, across updates, until cleared; the view says where each field comes from', async () => {
    await world.gate.setPolicy(MAIN, { dmPolicy: 'disabled' }, 'operator:ops');
    world.gate.update(settingsOf({ [MAIN]: { dmPolicy: 'allowlist', allowFrom: ['erin'] } }));
    expect(await world.gate.accept(dm(MAIN, 'erin', 'one'))).toMatchObject({ gate: 'refused' });
    const view = await world.gate.policyView(MAIN);
    expect(view?.dmPolicy).toMatchObject({ value: 'disabled', source: 'operator', updatedBy: 'operator:ops' });
    expect(view?.allowFrom).toEqual({ value: ['erin'], source: 'config' });
    expect(await world.gate.clearPolicy(MAIN, 'dmPolicy', 'operator:ops')).toBe(true);
    expect(await world.gate.accept(dm(MAIN, 'erin', 'two'))).toMatchObject({ gate: 'admitted' });
    const actions = (await world.storage.audit.list({ limit: 20 })).map((row) => row.action);
    expect(actions).toEqual(expect.arrayContaining(['policy.update', 'policy.reset']));
  });
});
