import { GENERIC_MODEL_LIMITS, KNOWN_MODEL_LIMITS, defaultModelSpec, knownModelLimits } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { capMaxTokens, resolveModelLimits, resolveModelSpecs } from '../src/config-models.js';
import { configFailure, parseTestConfig } from './config-fixture.js';

const parse = parseTestConfig;
const failure = configFailure;

describe('the known table', () => {
  it('answers a name, its dated snapshot and -latest, and nothing for a near miss', () => {
    expect(knownModelLimits('claude-sonnet-4-5')).toBe(KNOWN_MODEL_LIMITS.get('claude-sonnet-4-5'));
    expect(knownModelLimits('claude-sonnet-4-5-20250929')).toBe(KNOWN_MODEL_LIMITS.get('claude-sonnet-4-5'));
    expect(knownModelLimits('claude-3-7-sonnet-latest')).toBe(KNOWN_MODEL_LIMITS.get('claude-3-7-sonnet'));
    // A minor version is its own entry, never its major's: claude-opus-4-1 is not claude-opus-4 with a suffix.
    expect(knownModelLimits('claude-opus-4-1-20250805')).toBe(KNOWN_MODEL_LIMITS.get('claude-opus-4-1'));
    expect(knownModelLimits('claude-opus-4-20250514')).toBe(KNOWN_MODEL_LIMITS.get('claude-opus-4'));
    expect(knownModelLimits('claude-sonnet-4-5-2025')).toBeUndefined();
    expect(knownModelLimits('claude-test')).toBeUndefined();
    expect(knownModelLimits('constructor')).toBeUndefined();
  });

  it('holds the published prices and cache minimums the issue names', () => {
    expect(defaultModelSpec('claude-sonnet-4-5')).toMatchObject({
      contextWindow: 200_000,
      outputReserve: 20_000,
      maxOutputTokens: 64_000,
      minCacheTokens: 1024,
      price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6 },
    });
    expect(defaultModelSpec('claude-haiku-4-5').minCacheTokens).toBe(4096);
    expect(defaultModelSpec('claude-opus-4-5')).toMatchObject({ minCacheTokens: 4096, price: { input: 5, output: 25, cacheRead: 0.5 } });
    expect(defaultModelSpec('claude-3-haiku').price).toEqual({ input: 0.25, output: 1.25, cacheRead: 0.03, cacheWrite5m: 0.3, cacheWrite1h: 0.5 });
    for (const [name, limits] of KNOWN_MODEL_LIMITS) expect(limits.outputReserve, name).toBeLessThan(limits.contextWindow);
  });

  it('gives an unknown name the generic default, a copy the caller may not corrupt', () => {
    const spec = defaultModelSpec('my-proxy-model');
    expect(spec).toEqual({ name: 'my-proxy-model', ...GENERIC_MODEL_LIMITS });
    spec.price.input = 999;
    expect(defaultModelSpec('my-proxy-model').price.input).toBe(GENERIC_MODEL_LIMITS.price.input);
  });
});

describe('resolveModelLimits', () => {
  it('puts an entry key over the known defaults, price keys one by one', () => {
    const { spec, source } = resolveModelLimits('claude-haiku-4-5', { contextWindow: 50_000, price: { output: 4 } });
    expect(source).toBe('config');
    expect(spec).toEqual({
      name: 'claude-haiku-4-5',
      contextWindow: 50_000,
      outputReserve: 20_000,
      maxOutputTokens: 64_000,
      minCacheTokens: 4096,
      price: { input: 1, output: 4, cacheRead: 0.1, cacheWrite5m: 1.25, cacheWrite1h: 2 },
    });
    // The table itself is untouched.
    expect(KNOWN_MODEL_LIMITS.get('claude-haiku-4-5')!.price.output).toBe(5);
    expect(KNOWN_MODEL_LIMITS.get('claude-haiku-4-5')!.contextWindow).toBe(200_000);
  });

  it('says where the values came from', () => {
    expect(resolveModelLimits('claude-sonnet-4', undefined).source).toBe('known');
    expect(resolveModelLimits('claude-test', undefined).source).toBe('generic');
    expect(resolveModelLimits('claude-test', {}).source).toBe('config');
  });
});

describe('resolveModelSpecs', () => {
  it('always resolves model.name and model.fallback, lists them first, and keeps the lookup total', () => {
    const cfg = parse(
      `{ model: { name: "claude-sonnet-4-5", fallback: "claude-haiku-4-5" }, models: { "proxy-x": { contextWindow: 32000, outputReserve: 4000 } } }`,
    );
    const specs = resolveModelSpecs(cfg.models, cfg.model.name, cfg.model.fallback);
    expect(specs.list.map((m) => [m.name, m.source, m.roles])).toEqual([
      ['claude-sonnet-4-5', 'known', ['primary']],
      ['claude-haiku-4-5', 'known', ['fallback']],
      ['proxy-x', 'config', []],
    ]);
    expect(specs.lookup('proxy-x')).toMatchObject({ contextWindow: 32_000, outputReserve: 4000, maxOutputTokens: 128_000 });
    expect(specs.lookup('never-configured')).toEqual({ name: 'never-configured', ...GENERIC_MODEL_LIMITS });
    // Resolved once: the same frozen object every time.
    expect(specs.lookup('proxy-x')).toBe(specs.lookup('proxy-x'));
    expect(Object.isFrozen(specs.lookup('proxy-x').price)).toBe(true);
  });

  it('a primary that is also its own fallback is listed once with both roles', () => {
    const specs = resolveModelSpecs({}, 'claude-test', 'claude-test');
    expect(specs.list).toHaveLength(1);
    expect(specs.list[0]!.roles).toEqual(['primary', 'fallback']);
  });

  it('a model named like an Object member gets the generic default, not a prototype value', () => {
    const specs = resolveModelSpecs({}, 'constructor', 'toString');
    expect(specs.lookup('constructor')).toEqual({ name: 'constructor', ...GENERIC_MODEL_LIMITS });
    expect(specs.lookup('__proto__').contextWindow).toBe(GENERIC_MODEL_LIMITS.contextWindow);
  });
});

describe('models config validation', () => {
  it('defaults to no entries', () => {
    expect(parse('{}').models).toEqual({});
  });

  it('names an unknown key, a negative number and a reserve not below the window', () => {
    expect(failure('{ models: { a: { window: 1 } } }')).toContain('"models.a.window"');
    expect(failure('{ models: { a: { price: { input: -1 } } } }')).toMatch(/models\.a\.price\.input: /);
    expect(failure('{ models: { a: { maxOutputTokens: 0 } } }')).toMatch(/models\.a\.maxOutputTokens: /);
    expect(failure('{ models: { a: { contextWindow: 30000, outputReserve: 30001 } } }')).toMatch(/models\.a\.outputReserve: must be less than contextWindow/);
    expect(failure('{ models: { "claude-sonnet-4-5": { contextWindow: 20000 } } }')).toMatch(
      /models\.claude-sonnet-4-5\.outputReserve: must be less than contextWindow \(20000 ≥ 20000\)/,
    );
    expect(failure('{ models: { "bad name": {} } }')).toMatch(/models\.bad name: /);
  });

  it('accepts a small window with its own reserve', () => {
    const cfg = parse('{ models: { "claude-test": { contextWindow: 20000, outputReserve: 4000 } } }');
    expect(cfg.models['claude-test']).toEqual({ contextWindow: 20_000, outputReserve: 4000 });
  });
});

describe('capMaxTokens', () => {
  const lookup = resolveModelSpecs({ small: { maxOutputTokens: 1000 }, smaller: { maxOutputTokens: 500 } }, 'small', undefined).lookup;

  it('leaves maxTokens within the cap alone', () => {
    expect(capMaxTokens(1000, lookup, 'small', undefined)).toEqual({ maxTokens: 1000 });
  });

  it('caps at the primary, and at the fallback when it is smaller', () => {
    expect(capMaxTokens(4096, lookup, 'small', undefined)).toEqual({ maxTokens: 1000, cappedBy: { model: 'small', maxOutputTokens: 1000, configured: 4096 } });
    expect(capMaxTokens(4096, lookup, 'small', 'smaller')).toEqual({ maxTokens: 500, cappedBy: { model: 'smaller', maxOutputTokens: 500, configured: 4096 } });
    expect(capMaxTokens(800, lookup, 'small', 'smaller')).toEqual({ maxTokens: 500, cappedBy: { model: 'smaller', maxOutputTokens: 500, configured: 800 } });
  });
});
