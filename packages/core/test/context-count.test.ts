import { AnthropicModelClient, defaultModelSpec, type Message, ModelError, type SystemBlock, TokenEstimator, type ToolSpec } from '@switchboard/agent';
import { CountingScriptedModel, type FakeAnthropic, ScriptedModel, requestTokens, startFakeAnthropic } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_COUNT_MARGIN, type ExactCounting, nearThreshold, turnCounting } from '../src/context/exact-count.js';
import { contextMeter } from '../src/context/meter.js';

const spec = defaultModelSpec('claude-test');
const signal = () => new AbortController().signal;
/** 688 characters + 12 of block framing: 175 tokens at 4 characters per token. */
const hello: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(688) }] }];
const longer: Message[] = [
  ...hello,
  { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
  { role: 'user', content: [{ type: 'text', text: 'again' }] },
];

function counting(client: ExactCounting['client'], failures: unknown[] = []): ExactCounting {
  return { client, model: 'claude-test', maxTokens: 512, margin: DEFAULT_COUNT_MARGIN, onFailure: (err) => failures.push(err) };
}

describe('nearThreshold', () => {
  it('is true within ±margin of the threshold and false outside it or for a senseless threshold', () => {
    expect(nearThreshold(90, 100, 0.1)).toBe(true);
    expect(nearThreshold(110, 100, 0.1)).toBe(true);
    expect(nearThreshold(89, 100, 0.1)).toBe(false);
    expect(nearThreshold(111, 100, 0.1)).toBe(false);
    expect(nearThreshold(100, 100, 0)).toBe(true);
    expect(nearThreshold(0, 0, 0.1)).toBe(false);
    expect(nearThreshold(5, Number.NaN, 0.1)).toBe(false);
    expect(nearThreshold(5, 5, -1)).toBe(false);
  });
});

describe('ContextMeter.measure with exact counts (scripted client)', () => {
  it('uses the estimate far from the threshold and asks nothing', async () => {
    const model = new CountingScriptedModel([], [999]);
    const meter = contextMeter(spec, new TokenEstimator(4), [], [], counting(model));
    expect(await meter.measure(hello, 300, signal())).toBe(175);
    expect(await meter.measure(hello, 150, signal())).toBe(175); // 175 > 150 + 15
    expect(model.counted).toHaveLength(0);
  });

  it('asks for the exact count within the margin, uses it, sends the turn’s request and calibrates the estimator', async () => {
    const system: SystemBlock[] = [{ type: 'text', text: 's'.repeat(40) }];
    const tools: ToolSpec[] = [{ name: 'read_file', description: 'reads', input_schema: { type: 'object' } }];
    const model = new CountingScriptedModel([], [140]);
    const estimator = new TokenEstimator(4);
    const meter = contextMeter(spec, estimator, system, tools, counting(model));
    const estimate = meter.estimate(hello);
    expect(await meter.measure(hello, estimate + 5, signal())).toBe(140);
    expect(model.counted).toEqual([{ model: 'claude-test', maxTokens: 512, system, tools, messages: hello }]);
    // The exact count said fewer tokens than 4 chars each: the ratio moved up, the next estimate is smaller.
    expect(estimator.charsPerToken).toBeGreaterThan(4);
    expect(meter.estimate(hello)).toBeLessThan(estimate);
  });

  it('asks once for an identical request within the turn, concurrent asks included, and again for a different one', async () => {
    let answer!: (n: number) => void;
    const model = new CountingScriptedModel([], [new Promise<number>((resolve) => (answer = resolve)), 190]);
    const meter = contextMeter(spec, new TokenEstimator(4), [], [], counting(model));
    // Two shapers asking about the same send at once (different thresholds, both near).
    const first = meter.measure(hello, 180, signal());
    const second = meter.measure(hello, 170, signal());
    answer(172);
    expect(await Promise.all([first, second])).toEqual([172, 172]);
    expect(await meter.measure(hello, 180, signal())).toBe(172);
    expect(model.counted).toHaveLength(1);
    // A different send (one more message) is a new question; the estimator learned 4.07 chars per token meanwhile.
    const near = meter.estimate(longer);
    expect(await meter.measure(longer, near, signal())).toBe(190);
    expect(model.counted).toHaveLength(2);
  });

  it('falls back to the estimate when the count fails, tells onFailure, and does not ask again for that request', async () => {
    const failures: unknown[] = [];
    const model = new CountingScriptedModel([], [new ModelError('rate_limit', 'slow down'), 50]);
    const estimator = new TokenEstimator(4);
    const meter = contextMeter(spec, estimator, [], [], counting(model, failures));
    expect(await meter.measure(hello, 180, signal())).toBe(175);
    expect(await meter.measure(hello, 180, signal())).toBe(175);
    expect(model.counted).toHaveLength(1);
    expect(failures).toHaveLength(1);
    expect((failures[0] as ModelError).kind).toBe('rate_limit');
    expect(estimator.charsPerToken).toBe(4);
  });

  it('never throws: a thrown non-error, a nonsense count, an aborted signal and a throwing logger all give the estimate', async () => {
    const failures: unknown[] = [];
    const model = new CountingScriptedModel([], [], () => {
      throw 'not an Error';
    });
    expect(await contextMeter(spec, new TokenEstimator(4), [], [], counting(model, failures)).measure(hello, 180, signal())).toBe(175);
    const nonsense = new CountingScriptedModel([], [Number.NaN]);
    expect(await contextMeter(spec, new TokenEstimator(4), [], [], counting(nonsense, failures)).measure(hello, 180, signal())).toBe(175);
    const held = new CountingScriptedModel([], [new Promise<number>(() => {})]);
    const controller = new AbortController();
    const pending = contextMeter(spec, new TokenEstimator(4), [], [], counting(held, failures)).measure(hello, 180, controller.signal);
    controller.abort();
    expect(await pending).toBe(175);
    expect(failures.map((e) => (e instanceof ModelError ? e.kind : typeof e))).toEqual(['string', 'object', 'aborted']);
    const loud: ExactCounting = {
      ...counting(new CountingScriptedModel([], [new ModelError('server', 'x')])),
      onFailure: () => {
        throw new Error('logger broke');
      },
    };
    expect(await contextMeter(spec, new TokenEstimator(4), [], [], loud).measure(hello, 180, signal())).toBe(175);
  });

  it('uses the estimate with a client that cannot count, or with counting off', async () => {
    expect(await contextMeter(spec, new TokenEstimator(4), [], [], counting(new ScriptedModel([]))).measure(hello, 175, signal())).toBe(175);
    const model = new CountingScriptedModel([], [1]);
    const off = turnCounting({ enabled: false, margin: 0.5 }, model, 'claude-test', 512, () => {});
    expect(off).toBeUndefined();
    expect(await contextMeter(spec, new TokenEstimator(4), [], [], off).measure(hello, 175, signal())).toBe(175);
    expect(model.counted).toHaveLength(0);
  });

  it('turnCounting defaults to on with a 10 % margin and logs a failure at debug with its kind', async () => {
    const logged: Array<[Record<string, unknown>, string]> = [];
    const model = new CountingScriptedModel([], [new ModelError('stalled', 'too slow')]);
    const on = turnCounting(undefined, model, 'claude-test', 512, (fields, message) => logged.push([fields, message]));
    expect(on).toMatchObject({ model: 'claude-test', maxTokens: 512, margin: 0.1 });
    expect(await contextMeter(spec, new TokenEstimator(4), [], [], on).measure(hello, 190, signal())).toBe(175);
    expect(logged).toEqual([[{ kind: 'stalled' }, 'token count failed; the estimate is used']]);
  });
});

describe('ContextMeter.measure over the real wire (AnthropicModelClient → the testkit fake)', () => {
  let fake: FakeAnthropic;
  let client: AnthropicModelClient;
  const system: SystemBlock[] = [{ type: 'text', text: 'You are terse.' }];
  const counts = () => fake.countTokensRequests.length;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    client = new AnthropicModelClient({ apiKey: 'sk-test', baseUrl: fake.url, requestTimeoutMs: 5_000, streamIdleTimeoutMs: 5_000, countTokensTimeoutMs: 150 });
  });
  afterAll(() => fake.close());

  it('sends count_tokens only near the threshold, and the answer is the request’s billed input', async () => {
    const meter = contextMeter(spec, new TokenEstimator(), system, [], counting(client));
    const estimate = meter.estimate(hello);
    expect(await meter.measure(hello, estimate * 3, signal())).toBe(estimate);
    expect(await meter.measure(hello, Math.floor(estimate / 3), signal())).toBe(estimate);
    expect(counts()).toBe(0);
    const exact = await meter.measure(hello, estimate, signal());
    expect(counts()).toBe(1);
    expect(exact).toBe(fake.countTokensRequests[0]!.countedTokens);
    expect(exact).toBe(requestTokens(fake.countTokensRequests[0]!.body));
    // A second shaper asking about the same send costs nothing more.
    expect(await meter.measure(hello, Math.round(estimate * 1.05), signal())).toBe(exact);
    expect(counts()).toBe(1);
    // The same request streamed is billed exactly that input.
    const gen = client.stream({ model: 'claude-test', system, tools: [], messages: hello, maxTokens: 512 }, signal());
    let step = await gen.next();
    while (!step.done) step = await gen.next();
    const usage = step.value.usage;
    expect(usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens).toBe(exact);
  });

  it('falls back to the estimate when the fake fails or stalls past the timeout', async () => {
    for (const scripted of [{ error: { status: 500, type: 'api_error', message: 'boom' } }, { stall: true }]) {
      fake.setCountTokensHandler(() => scripted);
      const failures: unknown[] = [];
      const meter = contextMeter(spec, new TokenEstimator(), system, [], counting(client, failures));
      const before = counts();
      const estimate = meter.estimate(hello);
      expect(await meter.measure(hello, estimate, signal())).toBe(estimate);
      expect(counts()).toBe(before + 1);
      expect((failures[0] as ModelError).kind).toBe('stall' in scripted ? 'stalled' : 'server');
    }
    fake.setCountTokensHandler(undefined);
  });
});
