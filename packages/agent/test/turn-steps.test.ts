import { describe, expect, it } from 'vitest';
import { ModelError } from '../src/errors.js';
import type { Message } from '../src/messages.js';
import { appendContinuation, appendToolResults, CONTINUE_PROMPT, injectSteered } from '../src/steering.js';
import { afterFinalReply, endTurn, maxTurnsResult, modelFailureResult, stoppedResult, terminalEvent } from '../src/turn-end.js';

const live = new AbortController().signal;

describe('injectSteered', () => {
  it('asks drainInjected once and adds nothing when nothing waits', () => {
    let asked = 0;
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }];
    expect(
      injectSteered(messages, () => {
        asked++;
        return [];
      }),
    ).toBeNull();
    expect(injectSteered(messages, undefined)).toBeNull();
    expect(asked).toBe(1);
    expect(messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('joins waiting texts onto a trailing user message (the tool results) and returns only the injected blocks', () => {
    const messages: Message[] = [
      { role: 'assistant', content: [{ type: 'tool_use', id: '1', name: 'r', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: '1', content: 'ok' }] },
    ];
    const injected = injectSteered(messages, () => ['a', 'b']);
    expect(injected).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'a' },
        { type: 'text', text: 'b' },
      ],
    });
    expect(messages).toHaveLength(2);
    expect(messages[1]!.content).toEqual([
      { type: 'tool_result', tool_use_id: '1', content: 'ok' },
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ]);
    expect(injected).not.toBe(messages[1]);
  });

  it('adds a new user message after an assistant message', () => {
    const messages: Message[] = [{ role: 'assistant', content: [{ type: 'text', text: 'partial' }] }];
    injectSteered(messages, () => ['more']);
    expect(messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'more' }] });
  });
});

describe('appendContinuation and appendToolResults', () => {
  it('append one user message each', () => {
    const messages: Message[] = [];
    const cont = appendContinuation(messages);
    expect(cont).toEqual({ role: 'user', content: [{ type: 'text', text: CONTINUE_PROMPT }] });
    appendToolResults(messages, [{ type: 'tool_result', tool_use_id: 'x', content: 'y' }]);
    expect(messages).toEqual([cont, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'y' }] }]);
  });
});

describe('afterFinalReply', () => {
  it('completes a finished reply, continues a cut one while continuations last, then completes it with a note', () => {
    expect(afterFinalReply('end_turn', 0, 2)).toEqual({ reason: 'completed' });
    expect(afterFinalReply('stop_sequence', 5, 0)).toEqual({ reason: 'completed' });
    expect(afterFinalReply('max_tokens', 0, 2)).toBe('continue');
    expect(afterFinalReply('max_tokens', 1, 2)).toBe('continue');
    expect(afterFinalReply('max_tokens', 2, 2)).toEqual({ reason: 'completed', error: 'The answer was cut off: the model hit its output limit repeatedly.' });
  });
});

describe('modelFailureResult', () => {
  it('maps an aborted call, or any failure once the signal fired, to aborted', () => {
    const fired = new AbortController();
    fired.abort();
    expect(modelFailureResult(new ModelError('aborted', 'x'), live)).toEqual({ reason: 'aborted', error: 'The turn was stopped.' });
    expect(modelFailureResult(new ModelError('server', 'HTTP 500'), fired.signal)).toEqual(stoppedResult());
  });
  it('advises a new session on prompt_too_long and shows the message of any other failure', () => {
    expect(modelFailureResult(new ModelError('prompt_too_long', 'upstream words'), live)).toEqual({
      reason: 'prompt_too_long',
      error: 'This conversation has grown too long for the model. Start a new session to continue.',
    });
    expect(modelFailureResult(new ModelError('auth', 'The API key was rejected.'), live)).toEqual({
      reason: 'model_error',
      error: 'The API key was rejected.',
    });
  });
  it('is total over thrown values without a usable message', () => {
    for (const thrown of [undefined, null, 'text', 42, new Error(''), { message: 7 }]) {
      expect(modelFailureResult(thrown, live)).toEqual({ reason: 'model_error', error: 'The model call failed.' });
    }
    expect(modelFailureResult(new Error('sleep broke'), live)).toEqual({ reason: 'model_error', error: 'sleep broke' });
  });
});

describe('terminal events', () => {
  it('carry the reason, and the error only when there is one', () => {
    expect(terminalEvent({ reason: 'completed' })).toEqual({ type: 'terminal', reason: 'completed' });
    expect(terminalEvent({ reason: 'completed' })).not.toHaveProperty('error');
    expect(terminalEvent(maxTurnsResult(3))).toEqual({
      type: 'terminal',
      reason: 'max_turns',
      error: "The turn stopped after 3 model calls (the agent's maxTurns limit).",
    });
  });
  it('endTurn yields the terminal event and returns the very result it was given', () => {
    const result = { reason: 'denial_limit' as const, error: 'I stopped.' };
    const gen = endTurn(result);
    expect(gen.next()).toEqual({ done: false, value: { type: 'terminal', reason: 'denial_limit', error: 'I stopped.' } });
    const last = gen.next();
    expect(last.done).toBe(true);
    expect(last.value).toBe(result);
  });
});
