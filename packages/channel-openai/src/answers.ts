import type { Answer } from './live-turns.js';
import { type ApiError, completionObject } from './wire.js';

/** The completion id of a turn (`GET /v1/chat/completions/{id}` finds it again). */
export const completionId = (turnId: string): string => `chatcmpl-${turnId}`;

/** The turn id a completion id names, or null. */
export function turnIdOf(completion: string): string | null {
  const m = /^chatcmpl-([A-Za-z0-9-]{1,64})$/.exec(completion);
  return m ? m[1]! : null;
}

/** A retry gets the same answer, so the client is told not to retry a turn that ended badly. */
const NO_RETRY = { 'x-should-retry': 'false' };

/**
 * The API error a turn that did not complete is answered with, or null for an answer. A budget
 * refusal is 429 `insufficient_quota` (the openai client's `RateLimitError`, as OpenAI itself
 * answers a spent quota); a turn cut off by a shutdown is 503 (retry it: the resumed turn answers
 * the retry); every other failure is 500 with the turn's end reason as the code.
 */
export function answerError(a: Answer): ApiError | null {
  if (a.state === 'completed') return null;
  const message = a.error ?? `The turn ended without an answer (${a.reason}).`;
  if (a.reason === 'budget_exceeded') return { status: 429, type: 'insufficient_quota', code: 'insufficient_quota', message, headers: NO_RETRY };
  if (a.reason === 'shutdown') return { status: 503, type: 'server_error', code: 'shutting_down', message: 'The gateway is shutting down; retry the request.' };
  if (a.reason === 'hook_stopped' || a.reason === 'denial_limit') return { status: 403, type: 'permission_error', code: a.reason, message, headers: NO_RETRY };
  return { status: 500, type: 'server_error', code: a.reason, message, headers: NO_RETRY };
}

/** The `chat.completion` body of a completed answer. */
export function completionBody(a: Answer, model: string, created = Math.floor(Date.now() / 1000)) {
  return completionObject({
    id: completionId(a.turnId),
    created,
    model: a.agentId ?? model,
    text: a.text,
    finishReason: a.reason === 'max_turns' ? 'length' : 'stop',
    ...(a.usage ? { usage: a.usage } : {}),
    switchboard: { turn_id: a.turnId, reason: a.reason, ...(a.notices.length ? { notices: a.notices } : {}) },
  });
}
