import type { TerminalReason } from '@switchboard/agent';

/**
 * Why a turn ended: the agent loop's reasons (`TerminalReason` of @switchboard/agent) plus the
 * engine's own — `hook_stopped` (a UserPromptSubmit hook refused the message), `internal` (the
 * gateway failed), `steered` (the message was absorbed into a running turn, which answers it) and
 * `shutdown` (suspended; resumed at the next start).
 */
export type TurnEndReason = TerminalReason | 'hook_stopped' | 'internal' | 'steered' | 'shutdown';

/** The state a turn ends in (the `turn_end` event's `state`). */
export type TurnEndState = 'completed' | 'failed' | 'interrupted';

/** The state a loop's end leaves a turn in: an answer (also after max_turns), a user stop, or a failure. */
export function endStateOf(reason: TerminalReason): TurnEndState {
  if (reason === 'completed' || reason === 'max_turns') return 'completed';
  return reason === 'aborted' ? 'interrupted' : 'failed';
}

/** How an approval of an ended turn is described when it is cancelled. */
export function cancelledBecause(state: TurnEndState, reason: TurnEndReason): string {
  if (state === 'interrupted') return 'the turn was stopped';
  return state === 'failed' ? `the turn failed (${reason})` : 'the turn ended';
}
