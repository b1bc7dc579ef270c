import { describe, expect, it } from 'vitest';
import { configFailure, parseTestConfig } from './config-fixture.js';

const parse = parseTestConfig;
const failure = configFailure;

describe('context.countTokens', () => {
  it('defaults to on, a 10 % margin and a 5 s timeout', () => {
    expect(parse('{}').context.countTokens).toEqual({ enabled: true, margin: 0.1, timeout: 5_000 });
  });

  it('takes each key alone, durations as text', () => {
    expect(parse('{ context: { countTokens: { enabled: false } } }').context.countTokens).toEqual({ enabled: false, margin: 0.1, timeout: 5_000 });
    expect(parse('{ context: { countTokens: { margin: 0.25, timeout: "800ms" } } }').context.countTokens).toEqual({
      enabled: true,
      margin: 0.25,
      timeout: 800,
    });
  });

  it('refuses a margin outside 0–1, a timeout under 100 ms and an unknown key, naming it', () => {
    expect(failure('{ context: { countTokens: { margin: 1.5 } } }')).toMatch(/context\.countTokens\.margin/);
    expect(failure('{ context: { countTokens: { margin: -0.1 } } }')).toMatch(/context\.countTokens\.margin/);
    expect(failure('{ context: { countTokens: { timeout: "10ms" } } }')).toMatch(/context\.countTokens\.timeout.*100ms/);
    expect(failure('{ context: { countTokens: { threshold: 3 } } }')).toMatch(/context\.countTokens.*threshold/);
  });
});
