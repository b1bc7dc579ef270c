import { describe, expect, it } from 'vitest';
import { ModelError } from '../src/errors.js';
import { abortableSleep, backoffDelay, callModelWithRetries, type ModelCallSettings, modelRoute, nextAttempt, type RetryPolicy } from '../src/model-call.js';
import type { Message } from '../src/messages.js';
import { ScriptedModel, type Step } from '@switchboard/testkit';

const policy: RetryPolicy = { maxRetries: 2, baseDelayMs: 100, maxDelayMs: 1_000 };
const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];

function settings(model: ScriptedModel, extra: Partial<ModelCallSettings> = {}): ModelCallSettings & { slept: number[] } {
  const slept: number[] = [];
  return {
    client: model,
    system: [{ type: 'text', text: 'sys' }],
    tools: [],
    maxTokens: 10,
    retry: policy,
    signal: new AbortController().signal,
    sleep: async (ms) => {
      slept.push(ms);
    },
    slept,
    ...extra,
  };
}

/** Drains a model call: its events and its response, or what it threw. */
async function drain(gen: ReturnType<typeof callModelWithRetries>) {
  const events: unknown[] = [];
  try {
    for (;;) {
      const r = await gen.next();
      if (r.done) return { events, response: r.value };
      events.push(r.value);
    }
  } catch (thrown) {
    return { events, thrown };
  }
}

const ok = (text: string): Step => ({ content: [{ type: 'text', text }] });
const fail = (kind: ConstructorParameters<typeof ModelError>[0], opts: ConstructorParameters<typeof ModelError>[2] = {}): Step => ({
  error: new ModelError(kind, `${kind} failure`, opts),
});

describe('backoffDelay', () => {
  it('doubles per attempt, caps at maxDelayMs and takes off up to a quarter as jitter', () => {
    expect([0, 1, 2, 3, 4].map((a) => backoffDelay(a, policy, () => 0))).toEqual([100, 200, 400, 800, 1_000]);
    expect(backoffDelay(1, policy, () => 1)).toBe(150);
    expect(backoffDelay(9, policy, () => 0.5)).toBe(875);
  });
});

describe('nextAttempt', () => {
  const retryable = new ModelError('overloaded', 'busy');
  it('retries a retryable error while the budget lasts, preferring the server-requested delay', () => {
    expect(nextAttempt(retryable, 0, modelRoute('a'), policy, () => 0)).toEqual({ action: 'retry', delayMs: 100 });
    expect(nextAttempt(retryable, 1, modelRoute('a'), policy, () => 0)).toEqual({ action: 'retry', delayMs: 200 });
    expect(nextAttempt(new ModelError('rate_limit', 'slow down', { retryAfterMs: 0 }), 0, modelRoute('a'), policy)).toEqual({ action: 'retry', delayMs: 0 });
  });
  it('switches to a fallback once the budget is spent, but only to a different model, and only once', () => {
    expect(nextAttempt(retryable, 2, modelRoute('a', 'b'), policy)).toEqual({ action: 'fallback', model: 'b' });
    expect(nextAttempt(retryable, 2, modelRoute('a'), policy)).toEqual({ action: 'fail' });
    expect(nextAttempt(retryable, 2, modelRoute('a', 'a'), policy)).toEqual({ action: 'fail' });
    expect(nextAttempt(retryable, 2, { current: 'b', fallback: 'b', usedFallback: true }, policy)).toEqual({ action: 'fail' });
    expect(nextAttempt(retryable, 2, { current: 'a', fallback: 'b', usedFallback: true }, policy)).toEqual({ action: 'fail' });
  });
  it('never retries or falls back on an error that is not retryable', () => {
    for (const kind of ['auth', 'invalid_request', 'prompt_too_long', 'spend_limit', 'no_model'] as const) {
      expect(nextAttempt(new ModelError(kind, kind), 0, modelRoute('a', 'b'), policy)).toEqual({ action: 'fail' });
    }
  });
});

describe('callModelWithRetries', () => {
  it('passes text deltas through and returns the response of the current model', async () => {
    const model = new ScriptedModel([
      {
        content: [
          { type: 'text', text: 'he' },
          { type: 'text', text: 'llo' },
        ],
      },
    ]);
    const out = await drain(callModelWithRetries(messages, modelRoute('a'), settings(model)));
    expect(out.events).toEqual([
      { type: 'text_delta', text: 'he' },
      { type: 'text_delta', text: 'llo' },
    ]);
    expect(out.response?.model).toBe('a');
    expect(model.requests[0]).toMatchObject({ model: 'a', maxTokens: 10, messages });
  });

  it('retries with the policy, resets a streamed attempt, falls back, and leaves the route on the fallback', async () => {
    const model = new ScriptedModel([fail('server', { streamedText: true }), fail('rate_limit', { retryAfterMs: 7 }), fail('overloaded'), ok('done')]);
    const route = modelRoute('a', 'b');
    const s = settings(model);
    const out = await drain(callModelWithRetries(messages, route, s));
    expect(out.events).toEqual([
      { type: 'attempt_reset', reason: 'server failure' },
      { type: 'model_retry', attempt: 1, delayMs: expect.any(Number), error: 'server failure', model: 'a', fallback: false },
      { type: 'model_retry', attempt: 2, delayMs: 7, error: 'rate_limit failure', model: 'a', fallback: false },
      { type: 'model_retry', attempt: 0, delayMs: 0, error: 'overloaded failure', model: 'b', fallback: true },
      { type: 'text_delta', text: 'done' },
    ]);
    expect(s.slept).toHaveLength(2);
    expect(s.slept[1]).toBe(7);
    expect(model.requests.map((r) => r.model)).toEqual(['a', 'a', 'a', 'b']);
    expect(route).toEqual({ current: 'b', fallback: 'b', usedFallback: true });
  });

  it('a fresh call on a route that already fell back starts its retry budget again but never falls back twice', async () => {
    const model = new ScriptedModel([fail('server'), fail('server'), fail('server')]);
    const route = { current: 'b', fallback: 'b', usedFallback: true };
    const out = await drain(callModelWithRetries(messages, route, settings(model)));
    expect(out.events.map((e) => (e as { type: string }).type)).toEqual(['model_retry', 'model_retry']);
    expect(out.thrown).toBeInstanceOf(ModelError);
    expect((out.thrown as ModelError).message).toBe('server failure');
  });

  it('throws an aborted error at once, without a reset or a retry', async () => {
    const model = new ScriptedModel([fail('aborted', { streamedText: true }), ok('never')]);
    const out = await drain(callModelWithRetries(messages, modelRoute('a', 'b'), settings(model)));
    expect(out.events).toEqual([]);
    expect((out.thrown as ModelError).kind).toBe('aborted');
    expect(model.requests).toHaveLength(1);
  });

  it('does not retry once the signal fired, whatever the error', async () => {
    const ac = new AbortController();
    ac.abort();
    const model = new ScriptedModel([fail('server', { streamedText: true }), ok('never')]);
    const out = await drain(callModelWithRetries(messages, modelRoute('a', 'b'), settings(model, { signal: ac.signal })));
    expect(out.events).toEqual([]);
    expect((out.thrown as ModelError).kind).toBe('server');
  });

  it('wraps a non-ModelError from the client as a retryable connection failure', async () => {
    const model = new ScriptedModel([]);
    const out = await drain(callModelWithRetries(messages, modelRoute('a'), settings(model, { retry: { ...policy, maxRetries: 1 } })));
    expect(out.events).toEqual([
      { type: 'model_retry', attempt: 1, delayMs: expect.any(Number), error: 'The model call failed unexpectedly.', model: 'a', fallback: false },
    ]);
    const thrown = out.thrown as ModelError;
    expect(thrown.kind).toBe('connection');
    expect((thrown.cause as Error).message).toBe('script exhausted');
  });

  it('lets a rejection of sleep pass through as thrown', async () => {
    const model = new ScriptedModel([fail('server'), ok('never')]);
    const stop = new Error('sleep refused');
    const out = await drain(
      callModelWithRetries(
        messages,
        modelRoute('a'),
        settings(model, {
          sleep: async () => {
            throw stop;
          },
        }),
      ),
    );
    expect(out.thrown).toBe(stop);
    expect(model.requests).toHaveLength(1);
  });
});

describe('abortableSleep', () => {
  it('resolves after the wait', async () => {
    await expect(abortableSleep(0, new AbortController().signal)).resolves.toBeUndefined();
  });
  it('rejects with an aborted ModelError when the signal already fired or fires while waiting', async () => {
    const fired = new AbortController();
    fired.abort();
    await expect(abortableSleep(60_000, fired.signal)).rejects.toMatchObject({ kind: 'aborted', message: 'The model call was aborted.' });
    const later = new AbortController();
    const waiting = abortableSleep(60_000, later.signal);
    later.abort();
    await expect(waiting).rejects.toMatchObject({ kind: 'aborted' });
  });
});
