import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../src/config.js';

const parse = (text: string) => parseConfig(text, {}, '/srv');

describe('agents.<id>.timezone', () => {
  it('defaults to UTC and keeps an IANA zone', () => {
    expect(parse('{ agents: { default: {} } }').agents.default!.timezone).toBe('UTC');
    expect(parse('{ agents: { default: { timezone: "Europe/Berlin" } } }').agents.default!.timezone).toBe('Europe/Berlin');
  });

  it('refuses an unknown zone, naming the key', () => {
    expect(() => parse('{ agents: { ops: { timezone: "Mars/Olympus_Mons" } } }')).toThrow(ConfigError);
    expect(() => parse('{ agents: { ops: { timezone: "" } } }')).toThrow(/agents\.ops\.timezone: expected an IANA time zone/);
  });
});
