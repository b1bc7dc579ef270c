import { defaultModelSpec, type Message, TokenEstimator } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
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
