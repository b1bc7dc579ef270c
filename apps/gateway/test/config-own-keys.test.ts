import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.js';

// Environment variable names that a plain `env[name]` resolves to Object.prototype's members.
const INHERITED = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf', 'toLocaleString'];
const name = fc.oneof(fc.constantFrom(...INHERITED), fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/));

describe('config interpolation looks variables up as own properties', () => {
  it('an unset variable named like an Object member is reported as unset, and a set one is used', () => {
    fc.assert(
      fc.property(name, (n) => {
        const text = `{ gateway: { dataDir: "/srv/\${${n}}" } }`;
        expect(() => parseConfig(text, {}, '/srv')).toThrow(ConfigError);
        expect(() => parseConfig(text, {}, '/srv')).toThrow(`environment variable ${n} is not set`);
        const env = Object.defineProperty({}, n, { value: 'data', enumerable: true }) as NodeJS.ProcessEnv;
        expect(parseConfig(text, env, '/srv').gateway.dataDir).toBe('/srv/data');
      }),
      { numRuns: Number(process.env.SWB_PROPERTY_RUNS ?? 200) },
    );
  });
});
