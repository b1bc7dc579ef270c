import { defaultModelSpec, type Message, TokenEstimator } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { countMargin, MIN_COUNT_MARGIN } from '../src/context/exact-count.js';
import { contextMeter, meterShaper, TokenEstimators } from '../src/context/meter.js';

const hello: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'x'.repeat(688) }] }];

describe('the context meter', () => {
  it('measures against W = contextWindow − outputReserve and counts the fixed prefix', () => {
    const spec = { ...defaultModelSpec('claude-sonnet-4-5'), contextWindow: 20_000, outputReserve: 4_000 };
    const bare = contextMeter(spec, new TokenEstimator(4), [], []);
    const withSystem = contextMeter(spec, new TokenEstimator(4), [{ type: 'text', text: 'y'.repeat(400) }], []);
    expect(bare.window).toBe(16_000);
    expect(bare.contextWindow).toBe(20_000);
    expect(bare.estimate(hello)).toBe(175); // (688 + 12 framing) / 4
    expect(withSystem.estimate(hello)).toBe(275);
  });

  it('calibrates the shared estimator of its model from what the API counted, cached tokens included', async () => {
    const estimators = new TokenEstimators();
    const meter = contextMeter(defaultModelSpec('m'), estimators.of('m'), [], []);
    const before = meter.estimate(hello);
    const shaper = meterShaper(meter);
    expect((await shaper.shape(hello, hello, { call: 0, model: 'm', signal: new AbortController().signal })).send).toEqual(hello);
    // The API counted 100 tokens for 700 characters: 7 chars per token, so estimates shrink.
    for (let i = 0; i < 20; i++) shaper.observe!(hello, { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 80, cacheCreationInputTokens: 10 });
    expect(estimators.of('m').charsPerToken).toBeCloseTo(7, 1);
    expect(meter.estimate(hello)).toBeLessThan(before);
    expect(estimators.of('other').charsPerToken).toBe(3.5);
  });
});

describe('the exact-count band narrows as the estimate proves itself', () => {
  it('countMargin: the configured margin until calibrated, then 3× the recent error, within [2 %, margin]', () => {
    expect(countMargin(0.1, undefined)).toBe(0.1);
    expect(countMargin(0.1, Number.NaN)).toBe(0.1);
    expect(countMargin(0.1, 0.001)).toBe(MIN_COUNT_MARGIN);
    expect(countMargin(0.1, 0.02)).toBeCloseTo(0.06);
    expect(countMargin(0.1, 0.5)).toBe(0.1);
  });

  it('a calibrated meter asks for no count 5 % from a threshold, an uncalibrated one does', async () => {
    const asked: number[] = [];
    const client = {
      stream: () => {
        throw new Error('not used');
      },
      countTokens: async () => {
        asked.push(1);
        return 1_000;
      },
    };
    const counting = { client, model: 'm', maxTokens: 100, margin: 0.1 };
    const spec = defaultModelSpec('m');
    const signal = new AbortController().signal;
    // 700 characters (688 + 12 framing) at 3.5 per token: an estimate of 200, 5 % under a threshold of 210.
    const fresh = new TokenEstimator(3.5);
    expect(fresh.relativeError).toBeUndefined();
    await contextMeter(spec, fresh, [], [], counting).measure(hello, 210, signal);
    expect(asked).toHaveLength(1);

    const calibrated = new TokenEstimator(3.5);
    for (let i = 0; i < 10; i++) calibrated.observe(700, 200); // exact every time
    expect(calibrated.relativeError).toBe(0);
    expect(await contextMeter(spec, calibrated, [], [], counting).measure(hello, 210, signal)).toBe(200);
    expect(asked).toHaveLength(1);
    // Within 2 % it still asks.
    await contextMeter(spec, calibrated, [], [], counting).measure(hello, 203, signal);
    expect(asked).toHaveLength(2);
  });

  it('relativeError follows how far off the estimate was before each correction', () => {
    const est = new TokenEstimator(4, 0.5);
    est.observe(4000, 800); // estimated 1000 for 800: 25 % off
    expect(est.relativeError).toBeCloseTo(0.25);
    est.observe(4000, 800); // the ratio moved half way (4.5): estimated 889, 11 % off
    expect(est.relativeError).toBeCloseTo((0.25 + (889 - 800) / 800) / 2, 3);
  });
});
