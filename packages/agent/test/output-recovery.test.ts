import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type FakeAnthropic, ScriptedModel, type Step, startFakeAnthropic } from '@switchboard/testkit';
import { loopParams, runLoop } from './loop-fixture.js';
import { AnthropicModelClient, type AnyTool, ModelError, type QueryParams } from '../src/index.js';
import { modelRoute, type ModelCallSettings } from '../src/model-call.js';
import type { ModelResponse } from '../src/model.js';
import { callModelWithOutputRecovery, cutToolInputText, finalOutputCap, raisedOutputCap, type OutputRecoveryEvent } from '../src/output-recovery.js';

const user = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'write it' }] }];
const cutUse = (id: string, text?: string): Step => ({
  content: [...(text ? [{ type: 'text' as const, text }] : []), { type: 'tool_use', id, name: 'write_file', input: {} }],
  stopReason: 'max_tokens',
  cutToolUseId: id,
});
const writeUse = (id: string, content: string): Step => ({ content: [{ type: 'tool_use', id, name: 'write_file', input: { path: 'f.txt', content } }] });

function settings(model: ScriptedModel): ModelCallSettings {
  return {
    client: model,
    system: [{ type: 'text', text: 'sys' }],
    tools: [],
    maxTokens: 100,
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 },
    signal: new AbortController().signal,
    sleep: async () => {},
  };
}

async function recover(model: ScriptedModel, maxOutputTokens: number | undefined): Promise<{ events: OutputRecoveryEvent[]; response: ModelResponse }> {
  const events: OutputRecoveryEvent[] = [];
  const gen = callModelWithOutputRecovery(user, modelRoute('m'), settings(model), maxOutputTokens);
  for (;;) {
    const step = await gen.next();
    if (step.done) return { events, response: step.value };
    events.push(step.value);
  }
}

describe('raisedOutputCap / finalOutputCap', () => {
  it('raises only to a cap above maxTokens', () => {
    expect(raisedOutputCap(100, 300)).toBe(300);
    expect(raisedOutputCap(100, 100)).toBeNull();
    expect(raisedOutputCap(100, 50)).toBeNull();
    expect(raisedOutputCap(100, undefined)).toBeNull();
    expect(finalOutputCap(100, 300)).toBe(300);
    expect(finalOutputCap(100, undefined)).toBe(100);
  });

  it('tells the model the input was cut and to write in smaller parts', () => {
    const text = cutToolInputText('write_file', 300);
    expect(text).toMatch(/write_file call was cut off/);
    expect(text).toMatch(/300 tokens/);
    expect(text).toMatch(/smaller parts/);
  });
});

describe('callModelWithOutputRecovery', () => {
  it('retries a cut tool call once with the raised cap and returns the retry', async () => {
    const model = new ScriptedModel([cutUse('t1'), writeUse('t2', 'whole')]);
    const { events, response } = await recover(model, 300);
    expect(model.requests.map((r) => r.maxTokens)).toEqual([100, 300]);
    expect(response.cutToolUseId).toBeUndefined();
    expect(response.message.content[0]).toMatchObject({ id: 't2', input: { content: 'whole' } });
    // The cut reply's usage counts; no reset without streamed text.
    expect(events.map((e) => e.type)).toEqual(['usage', 'model_retry']);
    expect(events[1]).toMatchObject({ attempt: 1, delayMs: 0, model: 'm', fallback: false });
  });

  it('resets the streamed text of the cut reply before the retry', async () => {
    const model = new ScriptedModel([cutUse('t1', 'Writing the file now.'), writeUse('t2', 'whole')]);
    const { events } = await recover(model, 300);
    expect(events.map((e) => e.type)).toEqual(['text_delta', 'usage', 'attempt_reset', 'model_retry']);
  });

  it('does not retry a second time: the second cut reply is returned as it is', async () => {
    const model = new ScriptedModel([cutUse('t1'), cutUse('t2'), writeUse('never', 'x')]);
    const { response } = await recover(model, 300);
    expect(model.requests.map((r) => r.maxTokens)).toEqual([100, 300]);
    expect(response.cutToolUseId).toBe('t2');
  });

  it('makes one call when there is no higher cap, or the reply is not cut', async () => {
    for (const cap of [undefined, 100]) {
      const model = new ScriptedModel([cutUse('t1'), writeUse('never', 'x')]);
      const { events, response } = await recover(model, cap);
      expect(model.requests).toHaveLength(1);
      expect(events).toEqual([]);
      expect(response.cutToolUseId).toBe('t1');
    }
    // A text reply cut by max_tokens is no cut tool call: it is the loop's "continue" case.
    const text = new ScriptedModel([{ content: [{ type: 'text', text: 'cut' }], stopReason: 'max_tokens' }]);
    expect((await recover(text, 300)).response.stopReason).toBe('max_tokens');
    expect(text.requests).toHaveLength(1);
  });

  it('passes a failure of the retry through', async () => {
    const model = new ScriptedModel([cutUse('t1'), { error: new ModelError('auth', 'refused') }]);
    await expect(recover(model, 300)).rejects.toMatchObject({ kind: 'auth' });
  });
});

describe('the query loop with a tool call cut by max_tokens', () => {
  const written: string[] = [];
  const writeFile: AnyTool = {
    name: 'write_file',
    description: 'writes',
    input: z.object({ path: z.string(), content: z.string() }),
    readOnly: false,
    async call(input: { content: string }) {
      written.push(input.content);
      return { content: 'written' };
    },
  } as AnyTool;
  const readTool: AnyTool = {
    name: 'read',
    description: 'reads',
    input: z.object({}),
    readOnly: true,
    async call() {
      return { content: 'read done' };
    },
  };

  const params = (model: ScriptedModel, extra: Partial<QueryParams> = {}): QueryParams =>
    loopParams(model, [writeFile, readTool], { maxOutputTokens: 300, messages: user, retry: { maxRetries: 4, baseDelayMs: 1, maxDelayMs: 1 }, ...extra });
  const run = runLoop;

  it('cut twice: the call does not run, the model gets the "smaller parts" error, and the turn goes on', async () => {
    written.length = 0;
    const model = new ScriptedModel([cutUse('t1'), cutUse('t2'), { content: [{ type: 'text', text: 'in parts then' }] }]);
    const { events, result } = await run(params(model));
    expect(result).toEqual({ reason: 'completed' });
    expect(model.requests.map((r) => r.maxTokens)).toEqual([100, 300, 100]);
    expect(written).toEqual([]);
    const end = events.find((e) => e.type === 'tool_end');
    expect(end).toMatchObject({
      toolUseId: 't2',
      name: 'write_file',
      result: { tool_use_id: 't2', is_error: true, content: cutToolInputText('write_file', 300) },
    });
    expect(events.some((e) => e.type === 'tool_start')).toBe(false);
    // Only the retry's reply is in the history, paired with its error result.
    const third = model.requests[2]!.messages;
    expect(third.slice(1).map((m) => m.content.map((b) => ('id' in b ? b.id : 'tool_use_id' in b ? b.tool_use_id : b.type)))).toEqual([['t2'], ['t2']]);
    expect(events.filter((e) => e.type === 'usage')).toHaveLength(3);
  });

  it('cut once: the retry runs the tool with its whole input', async () => {
    written.length = 0;
    const model = new ScriptedModel([cutUse('t1'), writeUse('t2', 'whole'), { content: [{ type: 'text', text: 'done' }] }]);
    const { result } = await run(params(model));
    expect(result).toEqual({ reason: 'completed' });
    expect(written).toEqual(['whole']);
    expect(model.requests.map((r) => r.maxTokens)).toEqual([100, 300, 100]);
  });

  it('no higher cap: one call, then the error; the complete calls before the cut one still run', async () => {
    written.length = 0;
    const cut: Step = {
      content: [
        { type: 'tool_use', id: 'r1', name: 'read', input: {} },
        { type: 'tool_use', id: 't1', name: 'write_file', input: {} },
      ],
      stopReason: 'max_tokens',
      cutToolUseId: 't1',
    };
    const model = new ScriptedModel([cut, { content: [{ type: 'text', text: 'ok' }] }]);
    const { events } = await run(params(model, { maxOutputTokens: undefined }));
    expect(model.requests.map((r) => r.maxTokens)).toEqual([100, 100]);
    expect(events.filter((e) => e.type === 'tool_end').map((e) => (e.type === 'tool_end' ? [e.toolUseId, e.result.is_error === true] : null))).toEqual([
      ['r1', false],
      ['t1', true],
    ]);
    const results = model.requests[1]!.messages.at(-1)!.content;
    expect(results.map((b) => (b.type === 'tool_result' ? b.tool_use_id : b.type))).toEqual(['r1', 't1']);
    expect(String((results[1] as { content: string }).content)).toMatch(/100 tokens/);
  });
});

describe('AnthropicModelClient and a tool input cut by max_tokens (through the fake API)', () => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(() => fake.close());

  const client = () => new AnthropicModelClient({ apiKey: 'k', baseUrl: fake.url, requestTimeoutMs: 5_000, streamIdleTimeoutMs: 5_000 });
  const request = { model: 'claude-test', system: [{ type: 'text' as const, text: 'sys' }], messages: user, tools: [], maxTokens: 10 };
  async function complete(): Promise<ModelResponse> {
    const gen = client().stream(request, new AbortController().signal);
    for (;;) {
      const step = await gen.next();
      if (step.done) return step.value;
    }
  }

  it('returns the cut tool_use with an empty input, marked, instead of failing', async () => {
    fake.enqueue({ text: 'Sure.', toolUses: [{ name: 'write_file', input: { path: 'f', content: 'z'.repeat(200) }, id: 'toolu_cut' }], cutAtMaxTokens: true });
    const response = await complete();
    expect(response.stopReason).toBe('max_tokens');
    expect(response.cutToolUseId).toBe('toolu_cut');
    expect(response.message.content).toEqual([
      { type: 'text', text: 'Sure.' },
      { type: 'tool_use', id: 'toolu_cut', name: 'write_file', input: {} },
    ]);
    expect(response.usage.outputTokens).toBe(10);
  });

  it('a tool_use that fits the cap is whole and unmarked', async () => {
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'f', content: 'z' }, id: 'toolu_fits' }], cutAtMaxTokens: true });
    const response = await complete();
    expect(response.stopReason).toBe('tool_use');
    expect(response.cutToolUseId).toBeUndefined();
    expect(response.message.content).toEqual([{ type: 'tool_use', id: 'toolu_fits', name: 'write_file', input: { path: 'f', content: 'z' } }]);
  });
});
