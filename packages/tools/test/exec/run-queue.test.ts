/** The exec run queue: per-gateway and per-session limits, FIFO, aborts, idempotent release (unit and property tests). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExecRunQueue, type ReleaseRunSlot } from '../../src/index.js';

/** Lets settled promises run their callbacks (one event-loop turn; no wall clock involved). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Tracks one acquire call's outcome. */
function track(promise: Promise<ReleaseRunSlot>) {
  const state: { status: 'waiting' | 'held' | 'rejected'; release?: ReleaseRunSlot; reason?: unknown } = { status: 'waiting' };
  promise.then(
    (release) => {
      state.status = 'held';
      state.release = release;
    },
    (reason: unknown) => {
      state.status = 'rejected';
      state.reason = reason;
    },
  );
  return state;
}

describe('ExecRunQueue', () => {
  it('serves at once below the limits and queues beyond them, calling onWait once per waiting caller', async () => {
    const queue = new ExecRunQueue({ perGateway: 2, perSession: 2 });
    let waits = 0;
    const a = track(queue.acquire('s1', undefined, () => waits++));
    const b = track(queue.acquire('s2', undefined, () => waits++));
    const c = track(queue.acquire('s3', undefined, () => waits++));
    await settle();
    expect([a.status, b.status, c.status]).toEqual(['held', 'held', 'waiting']);
    expect(waits).toBe(1);
    expect(queue.active).toBe(2);
    expect(queue.waiting).toBe(1);
    a.release?.();
    await settle();
    expect(c.status).toBe('held');
    expect(waits).toBe(1);
    expect(queue.activeFor('s1')).toBe(0);
    expect(queue.activeFor('s3')).toBe(1);
  });

  it('is FIFO across the gateway', async () => {
    const queue = new ExecRunQueue({ perGateway: 1, perSession: 1 });
    const first = track(queue.acquire('s0', undefined));
    const [w1, w2, w3] = ['s1', 's2', 's3'].map((session) => track(queue.acquire(session, undefined)));
    await settle();
    const statuses = () => [w1?.status, w2?.status, w3?.status];
    expect(statuses()).toEqual(['waiting', 'waiting', 'waiting']);
    first.release?.();
    await settle();
    expect(statuses()).toEqual(['held', 'waiting', 'waiting']);
    w1?.release?.();
    await settle();
    expect(statuses()).toEqual(['held', 'held', 'waiting']);
    w2?.release?.();
    await settle();
    expect(statuses()).toEqual(['held', 'held', 'held']);
    expect(queue.active).toBe(1);
  });

  it('a session at its own limit does not block other sessions queued behind it', async () => {
    const queue = new ExecRunQueue({ perGateway: 3, perSession: 1 });
    const a1 = track(queue.acquire('a', undefined));
    const a2 = track(queue.acquire('a', undefined));
    const a3 = track(queue.acquire('a', undefined));
    const b1 = track(queue.acquire('b', undefined));
    await settle();
    expect([a1.status, a2.status, a3.status, b1.status]).toEqual(['held', 'waiting', 'waiting', 'held']);
    a1.release?.();
    await settle();
    // The next of session a, in order.
    expect([a2.status, a3.status]).toEqual(['held', 'waiting']);
  });

  it('a freed slot skips a waiter whose session is at its limit and serves the next session in line', async () => {
    const queue = new ExecRunQueue({ perGateway: 2, perSession: 1 });
    const a1 = track(queue.acquire('a', undefined));
    const c1 = track(queue.acquire('c', undefined));
    const a2 = track(queue.acquire('a', undefined));
    const b1 = track(queue.acquire('b', undefined));
    await settle();
    expect([a1.status, c1.status, a2.status, b1.status]).toEqual(['held', 'held', 'waiting', 'waiting']);
    c1.release?.();
    await settle();
    expect([a2.status, b1.status]).toEqual(['waiting', 'held']);
    a1.release?.();
    await settle();
    expect(a2.status).toBe('held');
  });

  it('an aborted waiter leaves the line with the signal reason and never takes a slot', async () => {
    const queue = new ExecRunQueue({ perGateway: 1, perSession: 1 });
    const held = track(queue.acquire('s', undefined));
    const controller = new AbortController();
    const aborted = track(queue.acquire('t', controller.signal));
    const next = track(queue.acquire('u', undefined));
    await settle();
    const reason = new Error('turn aborted');
    controller.abort(reason);
    await settle();
    expect(aborted.status).toBe('rejected');
    expect(aborted.reason).toBe(reason);
    expect(queue.waiting).toBe(1);
    held.release?.();
    await settle();
    expect(next.status).toBe('held');
    expect(queue.activeFor('t')).toBe(0);
    expect(queue.active).toBe(1);
  });

  it('rejects at once for an already aborted signal, and release is idempotent', async () => {
    const queue = new ExecRunQueue({ perGateway: 1, perSession: 1 });
    const reason = new Error('gone');
    await expect(queue.acquire('s', AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(queue.active).toBe(0);
    const release = await queue.acquire('s', undefined);
    const other = track(queue.acquire('s', undefined));
    const third = track(queue.acquire('s', undefined));
    release();
    release();
    await settle();
    expect(other.status).toBe('held');
    expect(third.status).toBe('waiting');
    expect(queue.active).toBe(1);
  });

  it('an onWait that throws does not break the queue', async () => {
    const queue = new ExecRunQueue({ perGateway: 1, perSession: 1 });
    const release = await queue.acquire('s', undefined);
    const waiter = track(
      queue.acquire('t', undefined, () => {
        throw new Error('observer');
      }),
    );
    release();
    await settle();
    expect(waiter.status).toBe('held');
  });

  it('refuses limits that are not integers of at least 1', () => {
    expect(() => new ExecRunQueue({ perGateway: 0, perSession: 1 })).toThrow(/perGateway/);
    expect(() => new ExecRunQueue({ perGateway: 2, perSession: 1.5 })).toThrow(/perSession/);
  });
});

type Op =
  | { kind: 'acquire'; session: number; onWait: boolean }
  | { kind: 'release'; pick: number; twice: boolean }
  | { kind: 'abortWaiting'; pick: number }
  | { kind: 'abortHeld'; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('acquire' as const), session: fc.nat(3), onWait: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat(), twice: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('abortWaiting' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('abortHeld' as const), pick: fc.nat() }) },
);

interface Request {
  id: number;
  session: string;
  controller: AbortController;
  waits: number;
  status: 'waiting' | 'held' | 'released' | 'rejected';
  release?: ReleaseRunSlot;
  reason?: unknown;
  /** Model violations seen in callbacks (checked after each step). */
  violations: string[];
}

describe('ExecRunQueue properties (random acquire/release/abort sequences)', () => {
  it('never exceeds the limits, serves waiters in order per session, is work-conserving, leaks no slot, and serves or aborts every waiter', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 3 }), fc.array(op, { maxLength: 60 }), async (perGateway, perSession, ops) => {
        const queue = new ExecRunQueue({ perGateway, perSession });
        const requests: Request[] = [];
        const held = () => requests.filter((r) => r.status === 'held');
        const heldFor = (session: string) => held().filter((r) => r.session === session).length;
        const waiting = () => requests.filter((r) => r.status === 'waiting');
        const check = () => {
          for (const request of requests) expect(request.violations).toEqual([]);
          expect(queue.active).toBe(held().length);
          expect(queue.active).toBeLessThanOrEqual(perGateway);
          expect(queue.waiting).toBe(waiting().length);
          for (const session of ['s0', 's1', 's2', 's3']) {
            expect(queue.activeFor(session)).toBe(heldFor(session));
            expect(heldFor(session)).toBeLessThanOrEqual(perSession);
          }
          // Work-conserving: nobody waits who could run now.
          for (const request of waiting()) expect(held().length < perGateway && heldFor(request.session) < perSession).toBe(false);
          for (const request of requests) expect(request.waits).toBeLessThanOrEqual(1);
        };
        const acquire = (session: string, withOnWait: boolean) => {
          const request: Request = { id: requests.length, session, controller: new AbortController(), waits: 0, status: 'waiting', violations: [] };
          const room = held().length < perGateway && heldFor(session) < perSession;
          requests.push(request);
          queue.acquire(session, request.controller.signal, withOnWait ? () => request.waits++ : undefined).then(
            (release) => {
              // Per-session FIFO: no earlier request of the same session is still waiting.
              if (requests.some((r) => r.id < request.id && r.session === session && r.status === 'waiting')) request.violations.push('served out of order');
              request.status = 'held';
              request.release = release;
            },
            (reason: unknown) => {
              request.status = 'rejected';
              request.reason = reason;
              if (reason !== request.controller.signal.reason) request.violations.push('rejected with another reason');
            },
          );
          if (withOnWait && request.waits !== (room ? 0 : 1)) request.violations.push(`onWait called ${request.waits} times with room=${room}`);
        };
        for (const step of ops) {
          if (step.kind === 'acquire') acquire(`s${step.session}`, step.onWait);
          else if (step.kind === 'release') {
            const target = held()[step.pick % Math.max(1, held().length)];
            if (target) {
              target.release?.();
              if (step.twice) target.release?.();
              target.status = 'released';
            }
          } else if (step.kind === 'abortWaiting') {
            waiting()[step.pick % Math.max(1, waiting().length)]?.controller.abort(new Error('aborted while waiting'));
          } else {
            // Aborting a served call's signal does not give its slot back; only release does.
            held()[step.pick % Math.max(1, held().length)]?.controller.abort(new Error('aborted while running'));
          }
          await settle();
          check();
        }
        // Drain: release everything held until the line is empty; each round serves at least one.
        for (let round = 0; round <= requests.length && (waiting().length > 0 || held().length > 0); round++) {
          for (const request of held()) {
            request.release?.();
            request.status = 'released';
          }
          await settle();
          check();
        }
        expect(requests.every((r) => r.status === 'released' || r.status === 'rejected')).toBe(true);
        expect(queue.active).toBe(0);
        expect(queue.waiting).toBe(0);
      }),
      { numRuns: 1000 },
    );
  });
});
