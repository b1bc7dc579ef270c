import { ModelError } from './errors.js';
import type { AgentEvent } from './events.js';
import type { Message, SystemBlock } from './messages.js';
import type { ModelClient, ModelRequest, ModelResponse, ToolSpec } from './model.js';

export interface RetryPolicy {
  /** Retries per model before giving up (or switching to the fallback model). */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * Waits `ms` between retries. Contract: resolves after the wait; rejects once `signal` fires
 * (with `ModelError('aborted')`, so the turn ends `aborted`). Any other rejection ends the call
 * like a failed model call.
 */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** The default {@link Sleep}: a timer that an abort clears. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ModelError('aborted', 'The model call was aborted.'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelError('aborted', 'The model call was aborted.'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Exponential backoff with up to 25 % jitter, never above maxDelayMs. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random = Math.random): number {
  const raw = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(raw * (1 - 0.25 * random()));
}

/**
 * Which model a turn calls. It starts on the primary and switches to the fallback at most once,
 * when the primary's retry budget is spent; the switch holds for the rest of the turn.
 */
export interface ModelRoute {
  current: string;
  readonly fallback: string | undefined;
  usedFallback: boolean;
}

/** A route on `primary`, with `fallback` in reserve. */
export function modelRoute(primary: string, fallback?: string): ModelRoute {
  return { current: primary, fallback, usedFallback: false };
}

/** What a failed attempt leads to (see {@link nextAttempt}). */
export type RetryStep = { action: 'retry'; delayMs: number } | { action: 'fallback'; model: string } | { action: 'fail' };

/**
 * Decides what follows a failed attempt (pure): retry the same model after a delay (the server's
 * retry-after, else {@link backoffDelay}) while `attempt` (retries made so far on this model) is
 * under the budget; then switch once to a fallback that differs from the current model; else fail.
 * Only retryable errors are retried or fall back.
 */
export function nextAttempt(error: ModelError, attempt: number, route: Readonly<ModelRoute>, policy: RetryPolicy, random = Math.random): RetryStep {
  if (error.retryable && attempt < policy.maxRetries) {
    return { action: 'retry', delayMs: error.retryAfterMs !== undefined ? error.retryAfterMs : backoffDelay(attempt, policy, random) };
  }
  if (error.retryable && route.fallback && !route.usedFallback && route.fallback !== route.current) {
    return { action: 'fallback', model: route.fallback };
  }
  return { action: 'fail' };
}

/** What one model call needs besides the conversation and the route. */
export interface ModelCallSettings {
  client: ModelClient;
  system: SystemBlock[];
  tools: ToolSpec[];
  maxTokens: number;
  retry: RetryPolicy;
  signal: AbortSignal;
  sleep: Sleep;
}

/** The events a model call yields. */
export type ModelCallEvent = Extract<AgentEvent, { type: 'text_delta' | 'attempt_reset' | 'model_retry' }>;

/**
 * One model call with retries, backoff and the fallback model. Yields each text delta as it
 * streams, `attempt_reset` when a failed attempt had streamed text, and `model_retry` before each
 * retry or the switch to the fallback (which updates `route`). Returns the response. Throws a
 * `ModelError`: the `aborted` one as soon as the call is aborted (no retry, no reset event), else
 * the last failure once {@link nextAttempt} says `fail`. A non-`ModelError` from the client counts
 * as a retryable connection failure; a rejection of `settings.sleep` passes through as thrown.
 */
export async function* callModelWithRetries(
  messages: Message[],
  route: ModelRoute,
  settings: ModelCallSettings,
): AsyncGenerator<ModelCallEvent, ModelResponse, void> {
  let attempt = 0;
  for (;;) {
    const request: ModelRequest = { model: route.current, system: settings.system, messages, tools: settings.tools, maxTokens: settings.maxTokens };
    const stream = settings.client.stream(request, settings.signal);
    try {
      for (;;) {
        const step = await stream.next();
        if (step.done) return step.value;
        yield { type: 'text_delta', text: step.value.text };
      }
    } catch (err) {
      const error = err instanceof ModelError ? err : new ModelError('connection', 'The model call failed unexpectedly.', { cause: err });
      if (error.kind === 'aborted' || settings.signal.aborted) throw error;
      if (error.streamedText) yield { type: 'attempt_reset', reason: error.message };
      const next = nextAttempt(error, attempt, route, settings.retry);
      if (next.action === 'retry') {
        attempt++;
        yield { type: 'model_retry', attempt, delayMs: next.delayMs, error: error.message, model: route.current, fallback: false };
        await settings.sleep(next.delayMs, settings.signal);
        continue;
      }
      if (next.action === 'fallback') {
        route.usedFallback = true;
        route.current = next.model;
        attempt = 0;
        yield { type: 'model_retry', attempt: 0, delayMs: 0, error: error.message, model: route.current, fallback: true };
        continue;
      }
      throw error;
    }
  }
}
