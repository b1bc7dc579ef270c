import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.js';
import { parseTestConfig as parse } from './config-fixture.js';

describe('metrics', () => {
  it('defaults: enabled, on the gateway port (no port of its own, no host)', () => {
    expect(parse('{}').metrics).toEqual({ enabled: true });
  });

  it('takes a port of its own (0: any free one) and a host with it', () => {
    expect(parse('{ metrics: { port: 9464 } }').metrics).toEqual({ enabled: true, port: 9464 });
    expect(parse('{ metrics: { port: 0, host: "0.0.0.0" } }').metrics).toEqual({ enabled: true, port: 0, host: '0.0.0.0' });
    expect(parse('{ metrics: { enabled: false } }').metrics).toEqual({ enabled: false });
  });

  it.each([
    ['{ metrics: { port: 70000 } }', /metrics\.port: /],
    ['{ metrics: { port: -1 } }', /metrics\.port: /],
    ['{ metrics: { port: 1.5 } }', /metrics\.port: /],
    ['{ metrics: { port: "9464" } }', /metrics\.port: .*expected number/],
    ['{ metrics: { enabled: "yes" } }', /metrics\.enabled: .*expected boolean/],
    ['{ metrics: { host: "0.0.0.0" } }', /metrics\.host: only applies with metrics\.port/],
    ['{ metrics: { port: 9464, host: "" } }', /metrics\.host: /],
    ['{ metrics: { path: "/prom" } }', /unknown key\(s\) "metrics\.path"/],
    ['{ metrics: [] }', /metrics: /],
  ])('refuses %s, naming the key', (text, message) => {
    expect(() => parse(text)).toThrow(message);
  });

  it('hostile shapes are a ConfigError, never a crash; what is accepted is a well-formed section', () => {
    const hostile = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          enabled: fc.oneof(fc.boolean(), fc.jsonValue()),
          port: fc.oneof(fc.integer({ min: -10, max: 70_000 }), fc.double(), fc.jsonValue()),
          host: fc.oneof(fc.string(), fc.jsonValue()),
          __proto__: fc.jsonValue(),
        },
        { requiredKeys: [] },
      ),
    );
    fc.assert(
      fc.property(hostile, (value) => {
        try {
          const m = parse(JSON.stringify({ metrics: value })).metrics;
          expect(typeof m.enabled).toBe('boolean');
          if (m.port !== undefined) expect(Number.isInteger(m.port) && m.port >= 0 && m.port <= 65535).toBe(true);
          if (m.host !== undefined) expect(m.port).toBeDefined();
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          expect((err as Error).message).toMatch(/metrics/);
        }
      }),
      { numRuns: Number(process.env.SWB_PROPERTY_RUNS ?? 200) },
    );
  });
});
