import type { Message, RecoverInfo, RequestShaper, Shaped } from '@switchboard/agent';
import type { CompactionBreaker } from './compaction-breaker.js';
import { type CompactionContext, compactHistory, dropTurns } from './compaction-run.js';
import type { ContextMeter } from './meter.js';
import { inReminderBand, withSaveReminder } from '../memory/save-reminder.js';

/** What the auto-compact shaper of one turn works with. */
export interface CompactionShaperOptions {
  /** The compaction's context (settings, summary model, where the boundary is written, hooks, notices). */
  context: CompactionContext;
  meter: ContextMeter;
  breaker: CompactionBreaker;
  sessionId: string;
  /** The turn offers `memory_save`: just below the threshold, one request of the turn carries the save reminder (`withSaveReminder`). */
  remindToSave?: boolean;
}

/**
 * The auto-compact shaper of one turn (last in the chain, after the meter and microcompact).
 *
 * `shape`: when the request measures past `threshold · W`, summarizes the history before the
 * cut, appends the boundary and returns `{ send, history }` from it. A failed compaction (model
 * error, timeout, abort) leaves the request as it came (the turn goes on uncompacted) and is not
 * tried again in this turn.
 *
 * `recover` (`prompt_too_long`): first one reactive compaction per turn, if the breaker allows
 * one (at most `maxReactivePerHour` per session per rolling hour) and no compaction of this turn
 * failed; then, once per call, dropping the oldest turns after the boundary (persisted as a new
 * boundary); then null — the turn ends `prompt_too_long`. So a failing summary can never loop.
 */
export function compactionShaper(options: CompactionShaperOptions): RequestShaper {
  const { context, meter, breaker, sessionId } = options;
  const { settings } = context;
  let failed = false;
  let reactiveTried = false;
  let droppedAtCall = -1;
  let reminded = false;

  const tryCompact = async (
    trigger: 'auto' | 'reactive',
    history: readonly Message[],
    send: readonly Message[],
    signal: AbortSignal,
  ): Promise<Shaped | null> => {
    const outcome = await compactHistory(context, { trigger, history, send, signal });
    if (outcome.ok) return outcome.shaped;
    // A failed summary, or one that saved nothing, is not asked for again in this turn.
    if (outcome.reason === 'failed' || outcome.reason === 'no_gain') failed = true;
    return null;
  };

  return {
    async shape(history, send, info) {
      if (!settings.auto || failed) return { send: [...send] };
      const threshold = settings.threshold * meter.window;
      const tokens = await meter.measure(send, threshold, info.signal);
      // Before an auto-compaction the agent is reminded, once per turn, to save what matters.
      if (options.remindToSave && !reminded && inReminderBand(tokens, threshold)) {
        reminded = true;
        return { send: withSaveReminder(send) };
      }
      if (tokens <= threshold || info.signal.aborted) return { send: [...send] };
      return (await tryCompact('auto', history, send, info.signal)) ?? { send: [...send] };
    },

    async recover(history, send, info: RecoverInfo) {
      if (info.signal.aborted) return null;
      if (!reactiveTried && !failed) {
        reactiveTried = true;
        if (breaker.tryAcquire(sessionId)) {
          const shaped = await tryCompact('reactive', history, send, info.signal);
          if (shaped) return shaped;
        } else {
          context.log.warn({ sessionId }, 'reactive compaction skipped: the circuit breaker is open for this session');
        }
      }
      if (droppedAtCall === info.call) return null;
      droppedAtCall = info.call;
      const outcome = await dropTurns(context, { history, send });
      return outcome.ok ? outcome.shaped : null;
    },
  };
}
