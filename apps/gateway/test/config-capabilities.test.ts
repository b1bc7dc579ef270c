import fc from 'fast-check';
import { CapabilityRegistry } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.js';
import { offeredToOf, withOfferedToKey } from '../src/wiring/offered-to.js';
import { StartupError } from '../src/startup-errors.js';
import { parseTestConfig } from './config-fixture.js';

const parse = parseTestConfig;

describe('capabilities.offeredTo', () => {
  it('defaults to no override; entries resolve into a map for the registry (own keys, Object member names included)', () => {
    expect(parse('{}').capabilities).toEqual({ offeredTo: {} });
    const cfg = parse('{ capabilities: { offeredTo: { write_file: ["owner"], exec: ["owner", "admin", "member"], constructor: [] } } }');
    expect([...offeredToOf(cfg)]).toEqual([
      ['write_file', ['owner']],
      ['exec', ['owner', 'admin', 'member']],
      ['constructor', []],
    ]);
  });

  it('refuses an unknown role, a wrong type, an unknown key and an own __proto__ entry, naming the key', () => {
    expect(() => parse('{ capabilities: { offeredTo: { exec: ["owner", "root"] } } }')).toThrow(/capabilities\.offeredTo\.exec\.1/);
    expect(() => parse('{ capabilities: { offeredTo: { exec: "owner" } } }')).toThrow(/capabilities\.offeredTo\.exec: .*expected array/);
    expect(() => parse('{ capabilities: { offeredTo: ["exec"] } }')).toThrow(/capabilities\.offeredTo: .*expected record/);
    expect(() => parse('{ capabilities: { offerTo: {} } }')).toThrow(/unknown key\(s\) "capabilities\.offerTo"/);
    expect(() => parse('{ "capabilities": { "offeredTo": { "__proto__": ["owner"] } } }')).toThrow(
      /capabilities\.offeredTo\.__proto__: no tool is named "__proto__"/,
    );
  });

  it('hostile shapes are a ConfigError, never a crash or a silent drop', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify({ capabilities: { offeredTo: value } });
        try {
          const cfg = parse(text);
          // Accepted only as a record of role lists, every entry kept.
          expect(offeredToOf(cfg).size).toBe(Object.keys(value as object).length);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
        }
      }),
      { numRuns: Number(process.env.SWB_PROPERTY_RUNS ?? 200) },
    );
  });

  it('a tool the registry does not have is a StartupError naming the key', () => {
    const cfg = parse('{ capabilities: { offeredTo: { wirte_file: ["owner"] } } }');
    const build = () =>
      withOfferedToKey(() => new CapabilityRegistry({ tools: [], mcpServers: [], channels: [], model: cfg.model, hooks: {}, offeredTo: offeredToOf(cfg) }));
    expect(build).toThrow(StartupError);
    expect(build).toThrow(/capabilities\.offeredTo\.wirte_file: no tool named "wirte_file" is registered/);
    try {
      build();
    } catch (err) {
      expect((err as StartupError).key).toBe('capabilities.offeredTo.wirte_file');
    }
  });
});
