import type { AgentEvent, QueryResult } from './events.js';

/** The error of a turn whose signal fired. */
export const STOPPED_MESSAGE = 'The turn was stopped.';

/** The turn's signal fired. */
export function stoppedResult(): QueryResult {
  return { reason: 'aborted', error: STOPPED_MESSAGE };
}

/** The turn made `maxTurns` model calls and wanted another. */
export function maxTurnsResult(maxTurns: number): QueryResult {
  return { reason: 'max_turns', error: `The turn stopped after ${maxTurns} model calls (the agent's maxTurns limit).` };
}

/**
 * How a failed model call ends the turn: `aborted` when the call was aborted or the signal fired,
 * `prompt_too_long` with advice to start over, else `model_error` with the error's message
 * (safe to show: a `ModelError` carries no secret). Total over any thrown value.
 */
export function modelFailureResult(err: unknown, signal: AbortSignal, recoveries = 0): QueryResult {
  const failure = typeof err === 'object' && err !== null ? (err as { kind?: unknown; message?: unknown }) : {};
  if (failure.kind === 'aborted' || signal.aborted) return stoppedResult();
  if (failure.kind === 'prompt_too_long') {
    if (recoveries > 0) return promptTooLongAfterRecovery(recoveries);
    return { reason: 'prompt_too_long', error: 'This conversation has grown too long for the model. Start a new session to continue.' };
  }
  return { reason: 'model_error', error: (typeof failure.message === 'string' && failure.message) || 'The model call failed.' };
}

/**
 * How a `prompt_too_long` ends the turn after the shapers already made the request smaller
 * `recoveries` times (a reactive compaction, dropping the oldest turns) and the API still refused
 * it: says what was tried, that the message is kept, and what the person can do.
 */
export function promptTooLongAfterRecovery(recoveries: number): QueryResult {
  const tries = recoveries === 1 ? 'once' : `${recoveries} times`;
  return {
    reason: 'prompt_too_long',
    error: `This request is still too long for the model after the conversation was shortened ${tries} (summarized, then its oldest turns dropped). Your message is kept: send a shorter one, or start a new session with /new.`,
  };
}

/**
 * What follows a reply without tool uses: `continue` (ask the model to go on) when it stopped at
 * the output limit and continuations are left, else the turn completes — with an error saying the
 * answer was cut off when it hit the limit every time.
 */
export function afterFinalReply(stopReason: string, continuationsUsed: number, maxContinuations: number): 'continue' | QueryResult {
  if (stopReason !== 'max_tokens') return { reason: 'completed' };
  if (continuationsUsed < maxContinuations) return 'continue';
  return { reason: 'completed', error: 'The answer was cut off: the model hit its output limit repeatedly.' };
}

/** The terminal event announcing `result`. */
export function terminalEvent(result: QueryResult): Extract<AgentEvent, { type: 'terminal' }> {
  return { type: 'terminal', reason: result.reason, ...(result.error ? { error: result.error } : {}) };
}

/** Ends a turn: yields its terminal event and returns `result` itself. */
export function* endTurn(result: QueryResult): Generator<AgentEvent, QueryResult, void> {
  yield terminalEvent(result);
  return result;
}
