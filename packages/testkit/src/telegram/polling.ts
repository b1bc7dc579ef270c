import { TERMINATED_BY_OTHER, TgApiError, WEBHOOK_ACTIVE } from './api-error.js';
import type { BotState, PendingPoll } from './bot-state.js';
import { arr, int } from './params.js';
import type { TgEvent, TgUpdate } from './types.js';

/** Records a polling event for a bot. */
export type PollEmit = (bot: BotState, type: TgEvent['type'], call?: number, detail?: string) => void;

function finish(bot: BotState, poll: PendingPoll, status: number, body: unknown): void {
  if (poll.answered) return;
  poll.answered = true;
  clearTimeout(poll.timer);
  bot.polls.delete(poll);
  poll.answer(status, body);
}

function deliver(bot: BotState, poll: PendingPoll, updates: TgUpdate[], emit: PollEmit): void {
  finish(bot, poll, 200, { ok: true, result: updates });
  emit(bot, 'poll-answered', poll.seq, `${updates.length} update(s)`);
}

function stallPoll(bot: BotState, poll: PendingPoll, emit: PollEmit): void {
  poll.stalled = true;
  clearTimeout(poll.timer);
  delete poll.timer;
  emit(bot, 'poll-stalled', poll.seq);
}

/**
 * Serves `getUpdates` like Telegram: applies `offset` (confirming lower ids) and `allowed_updates`,
 * terminates an older pending poll with 409, answers at once when updates are queued or `timeout`
 * is 0, else holds the request until updates arrive or `timeout` seconds pass. A poll armed by
 * {@link stallPolling} is held forever instead. `onClientClose` registers a callback for the
 * client dropping the socket before the answer.
 */
export function handleGetUpdates(
  bot: BotState,
  params: Record<string, unknown>,
  poll: PendingPoll,
  onClientClose: (fn: () => void) => void,
  emit: PollEmit,
): void {
  if (bot.webhook) throw new TgApiError(409, WEBHOOK_ACTIVE);
  const offset = int(params.offset) ?? 0;
  const limit = Math.min(100, Math.max(1, int(params.limit) ?? 100));
  const timeout = Math.max(0, typeof params.timeout === 'number' ? params.timeout : (int(params.timeout) ?? 0));
  const allowed = arr(params.allowed_updates);
  if (allowed) bot.allowedUpdates = allowed.length > 0 ? allowed.map(String) : undefined;
  bot.confirm(offset);
  for (const other of [...bot.polls]) {
    if (other.stalled || other.gone()) continue;
    finish(bot, other, 409, new TgApiError(409, TERMINATED_BY_OTHER).toEnvelope());
    emit(bot, 'poll-conflict', other.seq, `terminated by call ${poll.seq}`);
  }
  poll.limit = limit;
  emit(bot, 'poll-started', poll.seq, `offset=${offset} limit=${limit} timeout=${timeout}`);
  onClientClose(() => {
    if (poll.answered) return;
    poll.answered = true;
    clearTimeout(poll.timer);
    bot.polls.delete(poll);
    emit(bot, poll.stalled ? 'stalled-poll-closed' : 'poll-closed', poll.seq);
  });
  if (bot.stallNext) {
    bot.stallNext = false;
    bot.polls.add(poll);
    stallPoll(bot, poll, emit);
    return;
  }
  const ready = bot.take(limit);
  if (ready.length > 0 || timeout === 0) {
    deliver(bot, poll, ready, emit);
    return;
  }
  bot.polls.add(poll);
  poll.timer = setTimeout(() => deliver(bot, poll, [], emit), timeout * 1000);
}

/** Answers the bot's pending (not stalled) polls if updates are now deliverable. */
export function wakePolls(bot: BotState, emit: PollEmit): void {
  for (const poll of [...bot.polls]) {
    if (poll.stalled) continue;
    const ready = bot.take(poll.limit);
    if (ready.length > 0) deliver(bot, poll, ready, emit);
  }
}

/** Stalls the bot's current pending poll, or (if none) the next one to arrive. */
export function stallPolling(bot: BotState, emit: PollEmit): void {
  const current = [...bot.polls].filter((p) => !p.stalled);
  if (current.length === 0) {
    bot.stallNext = true;
    return;
  }
  for (const poll of current) stallPoll(bot, poll, emit);
}

/** Clears every poll timer (used when the fake closes). */
export function clearPolls(bot: BotState): void {
  for (const poll of bot.polls) clearTimeout(poll.timer);
  bot.polls.clear();
  bot.stallNext = false;
}
