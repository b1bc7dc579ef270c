import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelError, type AnyTool } from '../src/index.js';
import { ScriptedModel, type Step } from '@switchboard/testkit';
import { loopParams, runLoop } from './loop-fixture.js';

const params = loopParams;
const run = runLoop;

/** A barrier that opens once `n` parties have arrived. */
function barrier(n: number) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return async () => {
    arrived++;
    if (arrived === n) open();
    await opened;
  };
}

const use = (id: string, name: string, input: unknown): Step['content' & keyof Step] => ({ type: 'tool_use', id, name, input }) as never;

describe('query loop', () => {
  it('runs consecutive concurrency-safe tools at once and returns results in request order', async () => {
    const wait = barrier(2);
    const finished: string[] = [];
    const slowFast = (name: string, delayAfterBarrier: number): AnyTool => ({
      name,
      description: name,
      input: z.object({}),
      readOnly: true,
      concurrencySafe: true,
      async call() {
        // Both calls must be in flight together, or the barrier never opens and the test times out.
        await wait();
        await new Promise((r) => setTimeout(r, delayAfterBarrier));
        finished.push(name);
        return { content: `${name} done` };
      },
    });
    const model = new ScriptedModel([{ content: [use('t1', 'slow', {}), use('t2', 'fast', {})] as never }, { content: [{ type: 'text', text: 'ok' }] }]);
    const { result } = await run(params(model, [slowFast('slow', 300), slowFast('fast', 0)]));
    expect(result.reason).toBe('completed');
    expect(finished).toEqual(['fast', 'slow']);
    const second = model.requests[1]!.messages.at(-1)!;
    expect(second.role).toBe('user');
    expect(second.content.map((b) => (b.type === 'tool_result' ? b.tool_use_id : b.type))).toEqual(['t1', 't2']);
  });

  it('runs a non-concurrency-safe tool alone, after the parallel batch before it', async () => {
    const log: string[] = [];
    const tool = (name: string, safe: boolean): AnyTool => ({
      name,
      description: name,
      input: z.object({}),
      readOnly: safe,
      concurrencySafe: safe,
      async call() {
        log.push(`start:${name}`);
        await new Promise((r) => setTimeout(r, 20));
        log.push(`end:${name}`);
        return { content: name };
      },
    });
    const model = new ScriptedModel([
      { content: [use('a', 'r1', {}), use('b', 'r2', {}), use('c', 'w', {})] as never },
      { content: [{ type: 'text', text: 'done' }] },
    ]);
    await run(params(model, [tool('r1', true), tool('r2', true), tool('w', false)]));
    expect(log.indexOf('start:w')).toBeGreaterThan(log.indexOf('end:r1'));
    expect(log.indexOf('start:w')).toBeGreaterThan(log.indexOf('end:r2'));
    expect(log.indexOf('start:r2')).toBeLessThan(log.indexOf('end:r1'));
  });

  it('turns a throwing tool, a schema failure and an unknown tool into is_error results and carries on', async () => {
    const boom: AnyTool = {
      name: 'boom',
      description: 'throws',
      input: z.object({ n: z.number() }),
      readOnly: true,
      concurrencySafe: false,
      async call() {
        throw new Error('kaput');
      },
    };
    const model = new ScriptedModel([
      { content: [use('1', 'boom', { n: 1 }), use('2', 'boom', { n: 'x' }), use('3', 'nope', {})] as never },
      { content: [{ type: 'text', text: 'recovered' }] },
    ]);
    const { result, events } = await run(params(model, [boom]));
    expect(result.reason).toBe('completed');
    const results = model.requests[1]!.messages.at(-1)!.content as Array<{ is_error?: boolean; content: string }>;
    expect(results.every((r) => r.is_error)).toBe(true);
    expect(results[0]!.content).toContain('kaput');
    expect(results[1]!.content).toMatch(/Invalid input for boom: n:/);
    expect(results[2]!.content).toContain('no tool named "nope"');
    expect(events.filter((e) => e.type === 'tool_end')).toHaveLength(3);
  });

  it('sends a denial back as an is_error result and never calls the tool', async () => {
    let called = false;
    const t: AnyTool = {
      name: 'w',
      description: 'w',
      input: z.object({}),
      readOnly: false,
      concurrencySafe: false,
      async call() {
        called = true;
        return { content: 'x' };
      },
    };
    const model = new ScriptedModel([{ content: [use('1', 'w', {})] as never }, { content: [{ type: 'text', text: 'ok' }] }]);
    await run(params(model, [t], { canUseTool: async () => ({ behavior: 'deny', reason: 'no writes', kind: 'rule' }) }));
    expect(called).toBe(false);
    const r = model.requests[1]!.messages.at(-1)!.content[0] as { is_error?: boolean; content: string };
    expect(r.is_error).toBe(true);
    expect(r.content).toContain('no writes');
  });

  it('stops at maxTurns', async () => {
    const t: AnyTool = { name: 'x', description: 'x', input: z.object({}), readOnly: true, concurrencySafe: true, call: async () => ({ content: '' }) };
    const model = new ScriptedModel([{ content: [use('1', 'x', {})] as never }, { content: [use('2', 'x', {})] as never }]);
    const { result } = await run(params(model, [t], { maxTurns: 2 }));
    expect(result.reason).toBe('max_turns');
    expect(model.requests).toHaveLength(2);
  });

  it('ends with model_error and a clear message when the model fails and retries are off', async () => {
    const model = new ScriptedModel([{ error: new ModelError('server', 'The model API failed with HTTP 500.', { status: 500 }) }]);
    const { result, events } = await run(params(model, []));
    expect(result).toEqual({ reason: 'model_error', error: 'The model API failed with HTTP 500.' });
    expect(events.at(-1)).toEqual({ type: 'terminal', reason: 'model_error', error: 'The model API failed with HTTP 500.' });
  });

  it('aborts a running tool when the signal fires', async () => {
    const ac = new AbortController();
    const t: AnyTool = {
      name: 'hang',
      description: 'hangs until aborted',
      input: z.object({}),
      readOnly: false,
      concurrencySafe: false,
      call: (_i, ctx) =>
        new Promise((_, reject) => {
          ac.abort();
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        }),
    };
    const model = new ScriptedModel([{ content: [use('1', 'hang', {})] as never }]);
    const { result } = await run(params(model, [t], { signal: ac.signal }));
    expect(result.reason).toBe('aborted');
  });

  it('settles trailing tool calls of the history first, using preset results where given (resume)', async () => {
    let calls = 0;
    const t: AnyTool = {
      name: 'r',
      description: 'r',
      input: z.object({}),
      readOnly: true,
      concurrencySafe: true,
      call: async () => ({ content: `run ${++calls}` }),
    };
    const model = new ScriptedModel([{ content: [{ type: 'text', text: 'after resume' }] }]);
    const preset = new Map([['a', { type: 'tool_result' as const, tool_use_id: 'a', content: 'interrupted', is_error: true }]]);
    const { result, events } = await run(
      params(model, [t], {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          { role: 'assistant', content: [use('a', 'r', {}), use('b', 'r', {})] as never },
        ],
        presetResults: preset,
      }),
    );
    expect(result.reason).toBe('completed');
    expect(calls).toBe(1);
    expect(events.filter((e) => e.type === 'tool_end').map((e) => (e as { toolUseId: string }).toolUseId)).toEqual(['b']);
    const sent = model.requests[0]!.messages.at(-1)!.content as Array<{ tool_use_id: string; content: string }>;
    expect(sent.map((b) => [b.tool_use_id, b.content])).toEqual([
      ['a', 'interrupted'],
      ['b', 'run 1'],
    ]);
  });
});
