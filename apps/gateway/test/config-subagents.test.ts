import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.js';
import { subagentTypesOf } from '../src/config-subagents.js';
import { configFailure, parseTestConfig as parse } from './config-fixture.js';

const namesOf = (setting: unknown) => (setting === 'readonly' ? ['read_file', 'list_files', 'search_files'] : ['exec']);

describe('subagents config', () => {
  it('defaults: no subagents for an agent, depth 1, 4 per turn, 16 per gateway, 30 min', () => {
    const cfg = parse('{}');
    expect(cfg.agents.default?.subagents).toBeUndefined();
    expect(subagentTypesOf(cfg.agents.default?.subagents, namesOf)).toBeUndefined();
    expect(cfg.subagents).toEqual({ maxDepth: 1, perTurn: 4, perGateway: 16, timeout: 1_800_000 });
  });

  it('`subagents: {}` gives the built-in general type; a configured type resolves its tools to names', () => {
    const empty = parse('{ agents: { default: { subagents: {} } } }');
    const general = subagentTypesOf(empty.agents.default?.subagents, namesOf)!;
    expect([...general.keys()]).toEqual(['general']);
    expect(general.get('general')).toMatchObject({ tools: 'inherit', maxTurns: 15, resultBudget: 20_000 });

    const cfg = parse(
      '{ agents: { default: { subagents: { researcher: { description: "reads", tools: { profile: "readonly" }, mode: "plan", model: "m2", maxTurns: 3, resultBudget: 500 }, lister: { description: "lists", tools: { allow: ["list_files"] } } } } }, subagents: { perTurn: 2, timeout: "5m" } }',
    );
    const types = subagentTypesOf(cfg.agents.default?.subagents, namesOf)!;
    expect([...types.keys()]).toEqual(['general', 'researcher', 'lister']);
    expect(types.get('researcher')).toMatchObject({
      tools: new Set(['read_file', 'list_files', 'search_files']),
      mode: 'plan',
      model: 'm2',
      maxTurns: 3,
      resultBudget: 500,
    });
    expect(types.get('lister')?.tools).toEqual(new Set(['list_files']));
    expect(cfg.subagents).toMatchObject({ perTurn: 2, timeout: 300_000 });
  });

  it.each([
    ['{ agents: { default: { subagents: { researcher: {} } } } }', /agents\.default\.subagents\.researcher\.description/],
    ['{ agents: { default: { subagents: { Bad: { description: "x" } } } } }', /agents\.default\.subagents/],
    ['{ agents: { default: { subagents: { r: { description: "x", tools: { allow: "read_file" } } } } } }', /agents\.default\.subagents\.r\.tools/],
    ['{ agents: { default: { subagents: { r: { description: "x", mode: "root" } } } } }', /agents\.default\.subagents\.r\.mode/],
    ['{ agents: { default: { subagents: { r: { description: "x", maxTurns: 0 } } } } }', /agents\.default\.subagents\.r\.maxTurns/],
    ['{ agents: { default: { subagents: { r: { description: "x", extra: 1 } } } } }', /extra/],
    ['{ subagents: { maxDepth: 4 } }', /subagents\.maxDepth/],
    ['{ subagents: { perTurn: 0 } }', /subagents\.perTurn/],
    ['{ subagents: { perGateway: "many" } }', /subagents\.perGateway/],
    ['{ subagents: { timeout: "10ms" } }', /subagents\.timeout: must be at least 1s/],
    ['{ subagents: { unknown: true } }', /unknown/],
  ])('refuses %s, naming the key', (text, message) => {
    expect(configFailure(text)).toMatch(message);
  });

  it('property: hostile subagent sections are refused with a ConfigError or parsed, never thrown otherwise', () => {
    const hostile = fc.oneof(
      fc.anything(),
      fc.dictionary(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'general', 'r'), fc.string()), fc.anything()),
      fc.constant(JSON.parse('{"__proto__":{"description":"x"}}')),
      fc.record({ description: fc.anything(), tools: fc.anything(), maxTurns: fc.anything(), resultBudget: fc.anything() }, { requiredKeys: [] }),
    );
    fc.assert(
      fc.property(hostile, fc.anything(), (types, limits) => {
        const text = JSON.stringify({ agents: { default: { subagents: types } }, subagents: limits });
        if (text === undefined) return;
        try {
          const cfg = parse(text);
          const resolved = subagentTypesOf(cfg.agents.default?.subagents, namesOf);
          if (resolved) expect(resolved.has('general')).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
        }
      }),
      { numRuns: 200 },
    );
  });
});
