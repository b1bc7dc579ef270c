/**
 * Why the agent loop ended: the reasons `query()` of @switchboard/agent returns today (its
 * `TerminalReason`). The engine assigns the loop's reason to {@link TurnEndReason}, so a reason
 * the agent adds without adding it here fails the type check.
 */
export type LoopEndReason = 'completed' | 'max_turns' | 'aborted' | 'interrupted' | 'model_error' | 'prompt_too_long' | 'hook_stopped' | 'denial_limit';

/**
 * Why a turn ended: the loop's reasons plus the engine's own — `hook_stopped` (a UserPromptSubmit
 * hook refused the message), `internal` (the gateway failed), `steered` (the message was absorbed
 * into a running turn, which answers it) and `shutdown` (suspended; resumed at the next start).
 */
export type TurnEndReason = LoopEndReason | 'internal' | 'steered' | 'shutdown';

/** The state a turn ends in (the `turn_end` event's `state`). */
export type TurnEndState = 'completed' | 'failed' | 'interrupted';

/** The state a loop's end leaves a turn in: an answer (also after max_turns), a user stop, or a failure. */
export function endStateOf(reason: LoopEndReason): TurnEndState {
  if (reason === 'completed' || reason === 'max_turns') return 'completed';
  return reason === 'aborted' ? 'interrupted' : 'failed';
}

/** How an approval of an ended turn is described when it is cancelled. */
export function cancelledBecause(state: TurnEndState, reason: TurnEndReason): string {
  if (state === 'interrupted') return 'the turn was stopped';
  return state === 'failed' ? `the turn failed (${reason})` : 'the turn ended';
}
