import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ModelError, query, type AgentEvent, type AnyTool, type QueryParams, type QueryResult } from '../src/index.js';
import { ScriptedModel, type Step } from '@switchboard/testkit';
import { loopParams } from './loop-fixture.js';

// Whole traces of the loop (every event in order, the result, every request the model saw), pinned
// in a snapshot taken before query() was split into named steps: the split must not change one.

function params(model: ScriptedModel, tools: AnyTool[], extra: Partial<QueryParams> = {}): QueryParams {
  return loopParams(model, tools, { modelName: 'primary', retry: { maxRetries: 0, baseDelayMs: 100, maxDelayMs: 1_000 }, maxContinuations: 2, ...extra });
}

async function trace(model: ScriptedModel, p: QueryParams): Promise<{ events: AgentEvent[]; result: QueryResult; requests: unknown[] }> {
  const events: AgentEvent[] = [];
  const gen = query(p);
  for (;;) {
    const r = await gen.next();
    if (r.done) return { events, result: r.value, requests: model.requests.map((q) => ({ model: q.model, messages: q.messages })) };
    events.push(r.value);
  }
}

const use = (id: string, name: string, input: unknown) => ({ type: 'tool_use' as const, id, name, input });
const text = (t: string) => ({ type: 'text' as const, text: t });

function tool(name: string, extra: Partial<AnyTool> = {}): AnyTool {
  return {
    name,
    description: name,
    input: z.object({ n: z.number().optional() }),
    readOnly: true,
    concurrencySafe: true,
    call: async (input: { n?: number }) => ({ content: `${name} ran with ${input.n ?? '-'}` }),
    ...extra,
  };
}

beforeEach(() => {
  vi.spyOn(Math, 'random').mockReturnValue(0.5);
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('query traces', () => {
  it('a plain text reply', async () => {
    const model = new ScriptedModel([{ content: [text('hello'), text(' there')] }]);
    expect(await trace(model, params(model, []))).toMatchSnapshot();
  });

  it('every way a tool use is settled, in batches', async () => {
    const steps: Step[] = [
      {
        content: [
          text('working'),
          use('1', 'safe', { n: 1 }),
          use('2', 'safe', { n: 'x' }),
          use('3', 'nope', {}),
          use('4', 'validated', { n: 4 }),
          use('5', 'writer', { n: 5 }),
          use('6', 'safe', { n: 6 }),
          use('7', 'rewritten', { n: 7 }),
          use('8', 'badrewrite', { n: 8 }),
          use('9', 'personal', {}),
          use('10', 'throwing_check', {}),
          use('11', 'big', {}),
          use('12', 'boom', {}),
          use('13', 'flagged', {}),
        ],
      },
      { content: [text('done')] },
    ];
    const model = new ScriptedModel(steps);
    const tools = [
      tool('safe'),
      tool('validated', { validateInput: async (i: { n?: number }) => (i.n === 4 ? { ok: false, message: 'four is not allowed' } : { ok: true }) }),
      tool('writer', { readOnly: false, concurrencySafe: false }),
      tool('rewritten'),
      tool('badrewrite'),
      tool('personal'),
      tool('throwing_check'),
      tool('big', { maxResultChars: 5, call: async () => ({ content: 'abcdefghij' }) }),
      tool('boom', {
        concurrencySafe: false,
        call: async () => {
          throw new Error('kaput');
        },
      }),
      tool('flagged', { call: async () => ({ content: 'soft failure', isError: true }) }),
    ];
    const canUseTool: QueryParams['canUseTool'] = async (t) => {
      if (t.name === 'rewritten') return { behavior: 'allow', updatedInput: { n: 70 } };
      if (t.name === 'badrewrite') return { behavior: 'allow', updatedInput: { n: 'eight' } };
      if (t.name === 'personal') return { behavior: 'deny', reason: 'not now', kind: 'person' };
      if (t.name === 'writer') return { behavior: 'deny', reason: 'no writes', kind: 'rule' };
      if (t.name === 'throwing_check') throw new Error('rule file unreadable');
      return { behavior: 'allow' };
    };
    const afterTool: QueryParams['afterTool'] = async ({ tool: t, result }) => (t.name === 'safe' ? `hook saw ${result.content}` : undefined);
    expect(await trace(model, params(model, tools, { canUseTool, afterTool }))).toMatchSnapshot();
  });

  it('retries, an attempt reset, the fallback model, and success', async () => {
    const model = new ScriptedModel([
      { error: new ModelError('overloaded', 'The model is overloaded.', { status: 529, streamedText: true }) },
      { error: new ModelError('rate_limit', 'Rate limited.', { status: 429, retryAfterMs: 1234 }) },
      { error: new ModelError('server', 'HTTP 500.', { status: 500 }) },
      { content: [text('from the fallback')] },
      { error: new ModelError('server', 'HTTP 502.', { status: 502 }) },
      { error: new ModelError('server', 'HTTP 503.', { status: 503 }) },
    ]);
    const delays: number[] = [];
    const p = params(model, [], {
      fallbackModel: 'backup',
      retry: { maxRetries: 2, baseDelayMs: 100, maxDelayMs: 1_000 },
      sleep: async (ms) => void delays.push(ms),
    });
    expect({ ...(await trace(model, p)), delays }).toMatchSnapshot();
  });

  it('the fallback is used once per turn, then the error ends the turn', async () => {
    const t = tool('safe');
    const model = new ScriptedModel([
      { error: new ModelError('server', 'HTTP 500.', { status: 500 }) },
      { content: [use('1', 'safe', {})] },
      { error: new ModelError('overloaded', 'Overloaded.', { status: 529 }) },
    ]);
    expect(await trace(model, params(model, [t], { fallbackModel: 'backup' }))).toMatchSnapshot();
  });

  it('a non-ModelError from the client counts as a connection failure', async () => {
    const model = new ScriptedModel([]);
    expect(await trace(model, params(model, [], { retry: { maxRetries: 1, baseDelayMs: 100, maxDelayMs: 1_000 } }))).toMatchSnapshot();
  });

  it('prompt_too_long, a non-retryable error and an aborted model call', async () => {
    const tooLong = new ScriptedModel([{ error: new ModelError('prompt_too_long', 'too long', { status: 400 }) }]);
    const auth = new ScriptedModel([{ error: new ModelError('auth', 'The API key was rejected.', { status: 401 }) }]);
    const aborted = new ScriptedModel([{ error: new ModelError('aborted', 'The model call was aborted.') }]);
    expect({
      tooLong: await trace(tooLong, params(tooLong, [], { fallbackModel: 'backup' })),
      auth: await trace(auth, params(auth, [], { fallbackModel: 'backup', retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 1 } })),
      aborted: await trace(aborted, params(aborted, [])),
    }).toMatchSnapshot();
  });

  it('max_tokens stops are continued, then the turn ends cut off', async () => {
    const model = new ScriptedModel([
      { content: [text('part 1')], stopReason: 'max_tokens' },
      { content: [], stopReason: 'max_tokens' },
      { content: [text('part 3')], stopReason: 'max_tokens' },
    ]);
    expect(await trace(model, params(model, []))).toMatchSnapshot();
  });

  it('steered messages join the tool results or become their own message', async () => {
    const model = new ScriptedModel([{ content: [use('1', 'safe', {})] }, { content: [text('a')], stopReason: 'max_tokens' }, { content: [text('b')] }]);
    const queue = [['first'], ['second', 'third'], [], ['fourth']];
    const drainInjected = () => queue.shift() ?? [];
    expect(await trace(model, params(model, [tool('safe')], { drainInjected }))).toMatchSnapshot();
  });

  it('shouldStop ends the turn after a batch with its own result', async () => {
    const model = new ScriptedModel([{ content: [use('1', 'safe', {})] }, { content: [use('2', 'safe', {})] }]);
    let batches = 0;
    const shouldStop = () => (++batches === 2 ? { reason: 'denial_limit' as const, error: 'I stopped: too many denials.' } : null);
    expect(await trace(model, params(model, [tool('safe')], { shouldStop }))).toMatchSnapshot();
  });

  it('maxTurns ends the turn before the next model call', async () => {
    const model = new ScriptedModel([{ content: [use('1', 'safe', {})] }, { content: [use('2', 'safe', {})] }]);
    expect(await trace(model, params(model, [tool('safe')], { maxTurns: 2 }))).toMatchSnapshot();
  });

  it('a resumed turn settles its open tool uses with preset results first', async () => {
    const model = new ScriptedModel([{ content: [text('after resume')] }]);
    const preset = new Map([['a', { type: 'tool_result' as const, tool_use_id: 'a', content: 'interrupted', is_error: true }]]);
    const p = params(model, [tool('safe'), tool('writer', { concurrencySafe: false })], {
      messages: [
        { role: 'user', content: [text('hi')] },
        { role: 'assistant', content: [use('a', 'writer', {}), use('b', 'safe', {}), use('c', 'safe', {})] },
      ],
      presetResults: preset,
      drainInjected: () => ['steered after resume'],
    });
    expect(await trace(model, p)).toMatchSnapshot();
  });

  it('an abort during a permission check ends the turn before the tool runs', async () => {
    const ac = new AbortController();
    let ran = false;
    const model = new ScriptedModel([{ content: [use('1', 'safe', {}), use('2', 'safe', {})] }]);
    const canUseTool: QueryParams['canUseTool'] = async () => {
      ac.abort();
      return { behavior: 'allow' };
    };
    const t = tool('safe', {
      call: async () => {
        ran = true;
        return { content: 'x' };
      },
    });
    expect({ ...(await trace(model, params(model, [t], { canUseTool, signal: ac.signal }))), ran }).toMatchSnapshot();
  });

  it('an abort while a batch runs ends the turn after its tool_end events', async () => {
    const ac = new AbortController();
    const model = new ScriptedModel([{ content: [use('1', 'safe', {}), use('2', 'writer', {})] }]);
    const t = tool('safe', {
      call: async () => {
        ac.abort();
        return { content: 'x' };
      },
    });
    expect(await trace(model, params(model, [t, tool('writer', { concurrencySafe: false })], { signal: ac.signal }))).toMatchSnapshot();
  });

  it('an abort before the first call ends the turn at once', async () => {
    const ac = new AbortController();
    ac.abort();
    const model = new ScriptedModel([{ content: [text('never')] }]);
    expect(await trace(model, params(model, [], { signal: ac.signal }))).toMatchSnapshot();
  });
});
