import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { TurnEndReason, TurnEvent } from '@switchboard/core';
import type { RenderOutcome } from '../fake-channel-records.js';
import type { ContractRig, PlatformOutput } from './harness.js';

/**
 * The channel contract, one check per point. Each check takes a started rig, drives it through
 * the platform fake and the env, and rejects (an AssertionError) when the channel breaks the
 * point. {@link runChannelContract} registers them as vitest tests; the suite's own test runs
 * them against deliberately broken channels.
 */

const end = (text: string, reason: TurnEndReason = 'completed'): TurnEvent => ({ type: 'turn_end', state: 'completed', reason, text });

function assertResolved(outcome: RenderOutcome, what: string): void {
  if (!outcome.ok) assert.fail(`${what} rejected (it must never throw): ${outcome.error instanceof Error ? outcome.error.message : String(outcome.error)}`);
}

const count = (out: PlatformOutput[], text: string) => out.filter((o) => o.text.includes(text)).length;

/** Accept before ack: the platform sees an item acknowledged only after `ctx.accept` resolved for it (a failing accept is not acked). */
export async function acceptBeforeAck(rig: ContractRig): Promise<void> {
  rig.env.failAccepts(1);
  const item = await rig.inject(`accept me ${randomUUID().slice(0, 8)}`);
  const tl = rig.env.timeline.filter((e) => e.key === item.dedupeKey);
  const firstAck = tl.find((e) => e.kind === 'ack');
  assert.ok(firstAck, 'the platform never saw the item acknowledged');
  const firstOk = tl.find((e) => e.kind === 'accept_ok');
  assert.ok(
    firstOk && firstOk.seq < firstAck.seq,
    `the item was acknowledged before ctx.accept resolved for it (timeline: ${tl.map((e) => e.kind).join(', ')})`,
  );
  assert.ok(
    tl.some((e) => e.kind === 'accept_failed' && e.seq < firstOk.seq),
    'the failing accept was not retried or redelivered before the ack',
  );
  assert.equal(rig.env.accepted.filter((m) => m.dedupeKey === item.dedupeKey).length, 1, 'the item was not stored exactly once');
}

/** A redelivery of the same item makes one turn (and is acknowledged again). */
export async function redeliveryMakesOneTurn(rig: ContractRig): Promise<void> {
  const item = await rig.inject(`once ${randomUUID().slice(0, 8)}`);
  const before = rig.env.turnsStarted.length;
  await rig.redeliver(item);
  assert.equal(rig.env.turnsStarted.length, before, 'the redelivery started a turn (under another dedupe key)');
  const acks = rig.env.timeline.filter((e) => e.key === item.dedupeKey && e.kind === 'ack');
  assert.ok(acks.length >= 2, `the redelivery was not acknowledged (acks: ${acks.length})`);
  assert.equal(rig.env.turnsFor(item.dedupeKey).length, 1, 'a redelivered item made more than one turn');
}

/** Draft → final: the final parts are ledgered once each and shown once. */
export async function finalLedgeredOnce(rig: ContractRig): Promise<void> {
  const turnId = randomUUID();
  const answer = `The answer ${turnId.slice(0, 8)}.`;
  const outcome = await rig.env.runTurn(
    rig.channel,
    rig.conversation,
    turnId,
    [{ type: 'text_delta', text: 'The ans' }, { type: 'text_delta', text: answer.slice(7) }, end(answer)],
    { clientId: `c-${turnId.slice(0, 8)}`, resumed: false },
  );
  assertResolved(outcome, 'render');
  const rows = await rig.env.ledger(turnId);
  const finals = rows.filter((r) => r.kind === 'final');
  assert.ok(finals.length >= 1, 'the final was not ledgered');
  const writes = rig.env.ledgerWrites.filter((w) => w.part.turnId === turnId && w.part.kind === 'final');
  assert.equal(writes.length, finals.length, `a final part was ledgered more than once (${writes.length} writes for ${finals.length} parts)`);
  const drafts = rig.env.ledgerWrites.filter((w) => w.part.turnId === turnId && w.part.kind === 'draft');
  assert.ok(
    drafts.every((w) => !w.existed),
    'a draft was ledgered twice',
  );
  assert.equal(count(await rig.output(), answer), 1, 'the final is not shown exactly once on the platform');
}

/** Resume: recorded finals are skipped; a recorded draft is edited into the final or deleted. */
export async function resumeSkipsFinalsAndFixesDraft(rig: ContractRig): Promise<void> {
  const turnId = randomUUID();
  const answer = `Resumed answer ${turnId.slice(0, 8)}.`;
  const meta = { clientId: `c-${turnId.slice(0, 8)}`, resumed: false };
  assertResolved(await rig.env.runTurn(rig.channel, rig.conversation, turnId, [end(answer)], meta), 'render');
  const before = await rig.output();
  const rowsBefore = await rig.env.ledger(turnId);
  const again: TurnEvent[] = [{ type: 'attempt_reset', reason: 'resumed after restart' }, { type: 'text_delta', text: 'Resumed' }, end(answer)];
  assertResolved(await rig.env.runTurn(rig.channel, rig.conversation, turnId, again, { ...meta, resumed: true }), 'resumed render');
  const after = await rig.output();
  assert.equal(count(after, answer), 1, 'a resumed turn sent its recorded final again');
  assert.equal(after.length, before.length, 'a resumed turn whose final is recorded showed something new');
  assert.deepEqual(
    (await rig.env.ledger(turnId)).map((r) => r.id),
    rowsBefore.map((r) => r.id),
    'a resumed turn changed the ledger of a delivered turn',
  );
  if (!rig.seedDraft || !rig.message) return;
  const draftTurn = randomUUID();
  const final = `Full answer ${draftTurn.slice(0, 8)}.`;
  const draftId = await rig.seedDraft('half an ans');
  await rig.env.seedDelivery({
    turnId: draftTurn,
    part: 0,
    kind: 'draft',
    channel: rig.conversation.channel,
    account: rig.conversation.account,
    conversationId: rig.conversation.id,
    platformMessageId: draftId,
    content: { text: 'half an ans' },
  });
  const resumed: TurnEvent[] = [{ type: 'attempt_reset', reason: 'resumed after restart' }, end(final)];
  assertResolved(await rig.env.runTurn(rig.channel, rig.conversation, draftTurn, resumed, { clientId: null, resumed: true }), 'resumed render');
  const draft = await rig.message(draftId);
  assert.ok(draft && (draft.deleted || draft.text === final), `the recorded draft was left as it was (${JSON.stringify(draft)})`);
  assert.equal(count(await rig.output(), final), 1, 'the resumed final is not shown exactly once');
  assert.equal(count(await rig.output(), 'half an ans'), 0, 'the stale draft text is still shown');
}

/** A steered message gets the channel's documented acknowledgement (WebSocket: one `final` with reason `steered`; chats: nothing). */
export async function steeredAcknowledgement(rig: ContractRig): Promise<void> {
  const turnId = randomUUID();
  const before = await rig.output();
  assertResolved(
    await rig.env.runTurn(rig.channel, rig.conversation, turnId, [end('', 'steered')], { clientId: `c-${turnId.slice(0, 8)}`, resumed: false }),
    'render of a steered turn',
  );
  const after = await rig.output();
  const added = after.slice(before.length);
  if (rig.steered === 'nothing') {
    assert.equal(after.length, before.length, `a steered message got output on a chat channel: ${JSON.stringify(added)}`);
    return;
  }
  const frames = after.filter((o) => o.turnId === turnId);
  assert.equal(frames.length, 1, `a steered message got ${frames.length} frames, not one final`);
  assert.equal(frames[0]!.kind, 'final', 'the steered acknowledgement is not a final');
  assert.equal(frames[0]!.reason, 'steered', 'the steered final does not carry reason steered');
}

/** `notify` and `render` never throw: hostile events, a failing ledger, a failing platform, a closed client. */
export async function neverThrows(rig: ContractRig): Promise<void> {
  const to = rig.conversation;
  const env = rig.env;
  async function* broken(): AsyncIterable<TurnEvent> {
    yield { type: 'text_delta', text: 'partial' };
    throw new Error('the turn stream broke');
  }
  assertResolved(await settle(() => rig.channel.render(to, randomUUID(), broken(), { clientId: null, resumed: false })), 'render over a failing stream');
  const hostile = [
    { type: 'no_such_event' },
    { type: 'text_delta' },
    { type: 'turn_end', state: 'failed', reason: 'internal', text: 'x'.repeat(9000), error: '<b>' },
  ];
  assertResolved(await env.runTurn(rig.channel, to, randomUUID(), hostile as unknown as TurnEvent[]), 'render of hostile events');
  env.failLedger(10);
  assertResolved(await env.runTurn(rig.channel, to, randomUUID(), [end('ledger down')]), 'render with the ledger failing');
  env.healLedger();
  const heal = await rig.breakPlatform();
  try {
    assertResolved(
      await env.runTurn(rig.channel, to, randomUUID(), [{ type: 'text_delta', text: 'x' }, end('platform down')]),
      'render with the platform failing',
    );
    assertResolved(await env.notify(rig.channel, to, 'platform down'), 'notify with the platform failing');
  } finally {
    await heal();
  }
  if (rig.closeClient) {
    await rig.closeClient();
    assertResolved(await env.runTurn(rig.channel, to, randomUUID(), [end('nobody listens')]), 'render to a closed client');
    assertResolved(await env.notify(rig.channel, to, 'nobody listens'), 'notify to a closed client');
  }
}

/** Watches the timers created from `start()` on: which are still pending (and keep the process alive). */
export interface TimerWatch {
  /** Timers created since the watch began that have neither fired nor been cleared, and are not unref'd. */
  pending(): string[];
  dispose(): void;
}

/** Starts watching timer creation (async_hooks `Timeout` resources). */
export function watchTimers(): TimerWatch {
  const live = new Map<number, { resource: { hasRef?: () => boolean }; stack: string }>();
  const hook = createHook({
    init(asyncId, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const stack = (new Error().stack ?? '').split('\n').slice(2, 8).join('\n');
      live.set(asyncId, { resource: resource as { hasRef?: () => boolean }, stack });
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  }).enable();
  return {
    pending: () => [...live.values()].filter((t) => t.resource.hasRef?.() !== false).map((t) => t.stack),
    dispose: () => hook.disable(),
  };
}

/**
 * `stop` is idempotent and prompt: concurrent and repeated calls resolve and the channel says it is
 * down. {@link checkContractPoint} then also asserts, once the platform fake and env are closed,
 * that no timer set since `start` is still pending ({@link assertNoTimersLeft}).
 */
export async function stopIdempotent(rig: ContractRig, budgetMs = 5000): Promise<void> {
  const first = settle(() => rig.channel.stop('shutdown'));
  const second = settle(() => rig.channel.stop('shutdown'));
  for (const [i, p] of [first, second].entries()) assertResolved(await within(p, budgetMs, `stop() call ${i + 1}`), `stop() call ${i + 1}`);
  assertResolved(
    await within(
      settle(() => rig.channel.stop('shutdown')),
      budgetMs,
      'stop() after stop()',
    ),
    'stop() after stop()',
  );
  assert.equal(rig.channel.health().state, 'down', 'a stopped channel does not report down');
  assertResolved(await rig.env.notify(rig.channel, rig.conversation, 'after stop'), 'notify after stop');
}

/** Fails when a timer created since `timers` began is still pending (neither fired nor cleared, not unref'd). */
export async function assertNoTimersLeft(timers: TimerWatch, known?: RegExp): Promise<void> {
  // Let callbacks of work the stop cancelled run once, then look.
  await new Promise<void>((r) => setImmediate(r));
  const left = timers.pending().filter((stack) => !known?.test(stack));
  assert.equal(left.length, 0, `stop() left ${left.length} timer(s) pending, set at:\n${left.join('\n---\n')}`);
}

async function settle(fn: () => Promise<void>): Promise<RenderOutcome> {
  try {
    await fn();
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Waits for `p`, failing when it has not settled after `ms` (a hung call; not a speed measurement). */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new assert.AssertionError({ message: `${what} did not settle within ${ms} ms (hung)` })), ms);
  });
  return Promise.race([p, hung]).finally(() => clearTimeout(timer));
}

/** Every contract point, by name, in the order the suite runs them. */
export const CONTRACT_POINTS = {
  'accept before ack': acceptBeforeAck,
  'a redelivery makes one turn': redeliveryMakesOneTurn,
  'draft → final ledgered once': finalLedgeredOnce,
  'resume edits or deletes a recorded draft and skips recorded finals': resumeSkipsFinalsAndFixesDraft,
  'a steered message gets the documented acknowledgement': steeredAcknowledgement,
  'notify and render never throw': neverThrows,
  'stop is idempotent and prompt': stopIdempotent,
} as const;

/** The name of one contract point. */
export type ContractPoint = keyof typeof CONTRACT_POINTS;
