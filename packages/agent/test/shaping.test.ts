import { ScriptedModel } from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { ModelError, type Message, type RequestShaper, TokenEstimator, countedInputTokens, requestChars } from '../src/index.js';
import { loopParams, runLoop } from './loop-fixture.js';

const tooLong = () => new ModelError('prompt_too_long', 'The conversation is too long for the model.');
const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });

describe('the shaping seam of the query loop', () => {
  it('sends what the shaper chain decided, in order, and replaces the history when a shaper moves the boundary', async () => {
    const model = new ScriptedModel([text('ok')]);
    const summary: Message = { role: 'user', content: [{ type: 'text', text: 'summary' }] };
    const seen: number[] = [];
    const first: RequestShaper = {
      async shape(history, send) {
        seen.push(history.length, send.length);
        return { send: [summary, ...send], history: [summary, ...history] };
      },
    };
    const second: RequestShaper = {
      async shape(history, send) {
        seen.push(history.length, send.length);
        return { send: [...send] };
      },
    };
    const { result } = await runLoop(loopParams(model, [], { shapers: [first, second] }));
    expect(result.reason).toBe('completed');
    expect(seen).toEqual([1, 1, 2, 2]);
    expect(model.requests[0]!.messages.map((m) => m.content[0])).toEqual([summary.content[0], { type: 'text', text: 'hi' }]);
  });

  it('asks the chain for a smaller request after prompt_too_long, and ends prompt_too_long once no shaper has one', async () => {
    const model = new ScriptedModel([{ error: tooLong() }, { error: tooLong() }, { error: tooLong() }]);
    const attempts: number[] = [];
    const shaper: RequestShaper = {
      async shape(_history, send) {
        return { send: [...send] };
      },
      async recover(_history, send, info) {
        attempts.push(info.attempt);
        return info.attempt < 2 ? { send: [...send] } : null;
      },
    };
    const { result } = await runLoop(loopParams(model, [], { shapers: [shaper] }));
    expect(result.reason).toBe('prompt_too_long');
    // The person is told what was tried and that the message is kept.
    expect(result.error).toMatch(/still too long for the model after the conversation was shortened 2 times.*Your message is kept/);
    expect(attempts).toEqual([0, 1, 2]);
    expect(model.requests).toHaveLength(3);
  });

  it('retries with the recovered request and answers', async () => {
    const model = new ScriptedModel([{ error: tooLong() }, text('fits now')]);
    const small: Message = { role: 'user', content: [{ type: 'text', text: 'small' }] };
    const observed: number[] = [];
    const shaper: RequestShaper = {
      async shape(_history, send) {
        return { send: [...send] };
      },
      async recover() {
        return { send: [small] };
      },
      observe(sent) {
        observed.push(sent.length);
      },
    };
    const { result } = await runLoop(loopParams(model, [], { shapers: [shaper] }));
    expect(result.reason).toBe('completed');
    expect(model.requests[1]!.messages).toEqual([small]);
    expect(observed).toEqual([1]);
  });

  it('beforeCall ends the turn before the call it refuses', async () => {
    const model = new ScriptedModel([text('never')]);
    const { result, events } = await runLoop(
      loopParams(model, [], { beforeCall: async () => ({ reason: 'budget_exceeded', error: 'Your daily budget is spent.' }) }),
    );
    expect(result).toEqual({ reason: 'budget_exceeded', error: 'Your daily budget is spent.' });
    expect(events.at(-1)).toEqual({ type: 'terminal', reason: 'budget_exceeded', error: 'Your daily budget is spent.' });
    expect(model.requests).toHaveLength(0);
  });
});

describe('TokenEstimator', () => {
  it('moves towards the measured ratio and ignores nonsense', () => {
    const est = new TokenEstimator(3.5, 0.5);
    est.observe(4000, 1000);
    expect(est.charsPerToken).toBeCloseTo(3.75);
    for (const [c, t] of [
      [0, 10],
      [10, 0],
      [Number.NaN, 5],
      [1000, 1],
      [-5, 3],
    ] as const)
      est.observe(c, t);
    expect(est.charsPerToken).toBeCloseTo(3.75);
    expect(est.tokens(375)).toBe(100);
  });

  it('counts cached tokens in what the API counted, and every block kind in the characters', () => {
    expect(countedInputTokens({ inputTokens: 3, outputTokens: 9, cacheReadInputTokens: 100, cacheCreationInputTokens: 20 })).toBe(123);
    const chars = requestChars(
      [{ type: 'text', text: 'abcd' }],
      [{ name: 't', description: 'd', input_schema: {} }],
      [
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'x', name: 'read', input: { a: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: '12345' }] },
      ],
    );
    expect(chars).toBe(4 + 1 + 1 + 2 + 5 + 12 + 4 + 7 + 12 + 5 + 12);
  });
});
