import { DEFAULT_MICROCOMPACT, DEFAULT_RESULT_BUDGETS } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { toolResultBudgets } from '../src/config-context.js';
import { configFailure, parseTestConfig } from './config-fixture.js';

const parse = parseTestConfig;
const failure = configFailure;

describe('context.toolResults and context.microcompact', () => {
  it('default to the documented values (and to the agent package’s defaults)', () => {
    const cfg = parse('{}');
    expect(cfg.context.microcompact).toEqual({ threshold: 0.5, keepTurns: 3, minGain: 0.1 });
    expect(cfg.context.microcompact).toEqual(DEFAULT_MICROCOMPACT);
    expect(toolResultBudgets(cfg.context, cfg.limits)).toEqual({ maxChars: 50_000, maxMessageChars: 200_000 });
    expect(toolResultBudgets(cfg.context, cfg.limits)).toEqual(DEFAULT_RESULT_BUDGETS);
  });

  it('take maxChars from limits.toolResultMaxChars unless set themselves', () => {
    const old = parse('{ limits: { toolResultMaxChars: 1000 } }');
    expect(toolResultBudgets(old.context, old.limits).maxChars).toBe(1000);
    const both = parse('{ limits: { toolResultMaxChars: 1000 }, context: { toolResults: { maxChars: 7000, maxMessageChars: 9000 } } }');
    expect(toolResultBudgets(both.context, both.limits)).toEqual({ maxChars: 7000, maxMessageChars: 9000 });
  });

  it('refuse bad values, naming the key', () => {
    expect(failure('{ context: { microcompact: { threshold: 0 } } }')).toMatch(/context\.microcompact\.threshold/);
    expect(failure('{ context: { microcompact: { threshold: 1.5 } } }')).toMatch(/context\.microcompact\.threshold/);
    expect(failure('{ context: { microcompact: { keepTurns: 0 } } }')).toMatch(/context\.microcompact\.keepTurns/);
    expect(failure('{ context: { toolResults: { maxChars: 10 } } }')).toMatch(/context\.toolResults\.maxChars/);
    expect(failure('{ context: { toolResults: { maxMessageChars: "lots" } } }')).toMatch(/context\.toolResults\.maxMessageChars/);
    expect(failure('{ context: { toolResults: { other: 1 } } }')).toMatch(/context\.toolResults/);
  });
});
