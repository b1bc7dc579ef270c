import { describe, expect, it } from 'vitest';
import { baseTestConfig, buildTestConfig, CANARY_ANTHROPIC_KEY, deepMerge } from '../src/index.js';

describe('deepMerge', () => {
  it('merges objects, replaces arrays and primitives, and never mutates its inputs', () => {
    const base = { a: { b: 1, c: [1, 2], d: { e: 'x' } }, f: 'keep' };
    const override = { a: { c: [3], d: { g: true } }, f: 'new' };
    const merged = deepMerge(base, override);
    expect(merged).toEqual({ a: { b: 1, c: [3], d: { e: 'x', g: true } }, f: 'new' });
    expect(base).toEqual({ a: { b: 1, c: [1, 2], d: { e: 'x' } }, f: 'keep' });
    merged.a.c.push(9);
    expect(override.a.c).toEqual([3]);
  });

  it('deletes keys set to undefined, and replaces an object with a primitive and back', () => {
    expect(deepMerge({ a: { b: 1, c: 2 }, d: 1 }, { a: { b: undefined }, d: undefined })).toEqual({ a: { c: 2 } });
    expect(deepMerge({ a: { b: 1 } }, { a: null })).toEqual({ a: null });
    expect(deepMerge({ a: 1 } as Record<string, unknown>, { a: { b: 2 } })).toEqual({ a: { b: 2 } });
    expect(deepMerge({ a: 1 }, undefined)).toEqual({ a: 1 });
  });
});

describe('test gateway config', () => {
  it('plants the canary key, binds loopback on port 0 and allows one origin', () => {
    expect(baseTestConfig('/tmp/d', 'http://127.0.0.1:1')).toEqual({
      gateway: { host: '127.0.0.1', port: 0, dataDir: '/tmp/d' },
      log: { level: 'info' },
      model: { name: 'claude-test', baseUrl: 'http://127.0.0.1:1', apiKey: CANARY_ANTHROPIC_KEY, maxTokens: 1024 },
      agents: { default: { systemPrompt: 'You are a test assistant.' } },
      channels: { websocket: { accounts: { default: { allowedOrigins: ['https://app.example'] } } } },
    });
  });

  it('merges overrides over the base, deleting keys set to undefined', () => {
    const cfg = buildTestConfig('/tmp/d', undefined, {
      log: undefined,
      model: { maxTokens: 50 },
      channels: { websocket: { accounts: { default: { allowedOrigins: [], dmPolicy: 'open' } } } },
    });
    expect(cfg.log).toBeUndefined();
    expect(cfg.model).toEqual({ name: 'claude-test', baseUrl: undefined, apiKey: CANARY_ANTHROPIC_KEY, maxTokens: 50 });
    expect(JSON.parse(JSON.stringify(cfg)).model).not.toHaveProperty('baseUrl');
    expect(cfg.channels).toEqual({ websocket: { accounts: { default: { allowedOrigins: [], dmPolicy: 'open' } } } });
  });
});
