import { SwbError } from '@switchboard/agent';
import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AcceptResult, InboundMessage } from '../src/channel.js';
import type { Route } from '../src/engine.js';
import { Router } from '../src/router.js';
import { parseSessionKey, sessionKeyString } from '../src/session-key.js';
import { dm, roomMessage } from './boundary/gate-fixture.js';

const MAIN = 'webhook:main';

describe('Router', () => {
  let storage: SqliteStorage;
  let accepting: boolean;
  let gated: InboundMessage[];
  let queued: Array<{ message: InboundMessage; route: Route }>;
  let router: Router;

  beforeEach(() => {
    storage = openSqliteStorage({ file: ':memory:' });
    accepting = true;
    gated = [];
    queued = [];
    router = new Router({
      defaultAgent: 'helper',
      agents: ['helper', 'coder'],
      inboxMaxBytes: 2048,
      storage,
      engine: {
        async accept(message, route) {
          queued.push({ message, route });
          return storage.turns.accept(message, { key: route.key, clientId: route.clientId });
        },
      },
      // A gate that admits everything, as the boundary does for a known sender.
      gate: (message): Promise<AcceptResult> => {
        gated.push(message);
        return router.admit(message);
      },
      accepting: () => accepting,
    });
  });
  afterEach(() => storage.close());

  const codeOf = (err: unknown) => (err instanceof SwbError ? err.code : String(err));

  it('keys a DM by its person, a room by its conversation (and thread), all to the default agent', () => {
    const conversation = { channel: 'webhook', account: 'main', id: 'dm-a', kind: 'dm' as const };
    expect(router.sessionKey(conversation, 'p1')).toEqual({ agent: 'helper', channel: 'webhook', account: 'main', scope: 'dm', principalId: 'p1' });
    expect(router.sessionKey({ ...conversation, id: 'r1', kind: 'room', thread: 't9' }, '')).toEqual({
      agent: 'helper',
      channel: 'webhook',
      account: 'main',
      scope: 'room',
      conversation: 'r1',
      thread: 't9',
    });
    expect(router.sessionKey({ ...conversation, id: 'r1', kind: 'room' }, 'ignored')).not.toHaveProperty('thread');
  });

  it('admit queues a known sender’s DM and a room message; a DM without a principal is refused as an unknown sender', async () => {
    const known = dm(MAIN, 'a', 'hi', { principalId: 'p1' });
    expect(await router.accept(known)).toMatchObject({ duplicate: false, turnId: expect.any(String) });
    expect(queued[0]!.route).toEqual({ agentId: 'helper', key: expect.objectContaining({ scope: 'dm', principalId: 'p1' }), clientId: known.platformId });
    await router.accept(roomMessage(MAIN, 'r1', 'b', 'hello'));
    expect(queued[1]!.route.key).toMatchObject({ scope: 'room', conversation: 'r1' });
    expect(() => router.admit(dm(MAIN, 'stranger', 'hi'))).toThrow(expect.objectContaining({ code: 'SWB_E_UNKNOWN_SENDER' }));
    expect(queued).toHaveLength(2);
  });

  it('refuses every item while shutting down, before the gate', async () => {
    accepting = false;
    const err = await router.accept(dm(MAIN, 'a', 'hi', { principalId: 'p1' })).catch((e: unknown) => e);
    expect(codeOf(err)).toBe('SWB_E_SHUTTING_DOWN');
    expect(gated).toEqual([]);
    expect(queued).toEqual([]);
  });

  it('refuses an item too large to store; once dead-lettered, its redelivery is a duplicate whatever its size', async () => {
    const big = dm(MAIN, 'a', 'x'.repeat(4096), { principalId: 'p1' });
    const err = await router.accept(big).catch((e: unknown) => e);
    expect(codeOf(err)).toBe('SWB_E_INBOX_TOO_LARGE');
    expect((err as Error).message).toMatch(/over limits\.inboxMaxBytes \(2048\)/);
    expect(gated).toEqual([]);
    expect(await storage.turns.seen('webhook', 'main', big.dedupeKey)).toBeNull();

    await storage.deadLetters.record({
      channel: 'webhook',
      account: 'main',
      dedupeKey: big.dedupeKey,
      summary: 'dm, 4 KiB',
      error: 'SWB_E_INBOX_TOO_LARGE',
      attempts: 5,
      receivedAt: big.receivedAt,
    });
    expect(await router.accept(big)).toMatchObject({ duplicate: true });
    expect(gated).toEqual([]);
    expect(queued).toEqual([]);
  });

  it('an item that fits goes to the gate on every delivery; the inbox answers its redelivery as a duplicate', async () => {
    const message = dm(MAIN, 'a', 'fits', { principalId: 'p1' });
    const first = await router.accept(message);
    const again = await router.accept(message);
    expect(gated).toHaveLength(2);
    expect(again).toMatchObject({ duplicate: true, turnId: first.turnId });
    expect(queued).toHaveLength(2);
    expect(await storage.turns.unfinished()).toHaveLength(1);
  });

  it('routes a message that addresses an agent to it, and a named session beside the person’s default one; an unknown agent is refused', async () => {
    const plain = dm(MAIN, 'a', 'one', { principalId: 'p1' });
    const addressed = { ...dm(MAIN, 'a', 'two', { principalId: 'p1' }), agentId: 'coder', sessionLabel: 'tok.project' };
    await router.accept(plain);
    await router.accept(addressed);
    expect(queued[0]!.route.key).toEqual({ agent: 'helper', channel: 'webhook', account: 'main', scope: 'dm', principalId: 'p1' });
    expect(queued[1]!.route).toMatchObject({ agentId: 'coder', key: { agent: 'coder', scope: 'dm', principalId: 'p1', label: 'tok.project' } });
    const a = await storage.sessions.resolve(queued[0]!.route.key);
    const b = await storage.sessions.resolve(queued[1]!.route.key);
    expect(a.id).not.toBe(b.id);
    expect(parseSessionKey(sessionKeyString(queued[1]!.route.key))).toEqual(queued[1]!.route.key);
    expect(() => router.admit({ ...dm(MAIN, 'a', 'x', { principalId: 'p1' }), agentId: 'nope' })).toThrow(
      expect.objectContaining({ code: 'SWB_E_UNKNOWN_AGENT' }),
    );
  });
});
