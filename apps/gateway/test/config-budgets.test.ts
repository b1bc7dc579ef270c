import { describe, expect, it } from 'vitest';
import { budgetSettings } from '../src/config-budgets.js';
import { parseTestConfig } from './config-fixture.js';

const parse = parseTestConfig;

describe('budgets', () => {
  it('defaults to UTC and no budget at all', () => {
    const cfg = parse('{}');
    expect(cfg.budgets).toEqual({ timezone: 'UTC', agents: {}, roles: {}, principals: {} });
    const settings = budgetSettings(cfg.budgets);
    expect(settings.gateway).toBeUndefined();
    expect([settings.agents.size, settings.roles.size, settings.principals.size]).toEqual([0, 0, 0]);
  });

  it('resolves every scope into maps for core', () => {
    const cfg = parse(`{ budgets: { timezone: "America/New_York", gateway: { month: { usd: 500 } }, agents: { default: { day: { tokens: 10, usd: 1 } } },
      roles: { member: { day: { tokens: 5000 } } }, principals: { constructor: { month: { tokens: 7 } } } } }`);
    const s = budgetSettings(cfg.budgets);
    expect(s.timezone).toBe('America/New_York');
    expect(s.gateway).toEqual({ month: { usd: 500 } });
    expect(s.agents.get('default')).toEqual({ day: { tokens: 10, usd: 1 } });
    expect(s.roles.get('member')).toEqual({ day: { tokens: 5000 } });
    expect(s.principals.get('constructor')).toEqual({ month: { tokens: 7 } });
  });

  it('refuses a bad zone, an empty limit, a negative one, an unknown role or period, naming the key', () => {
    expect(() => parse('{ budgets: { timezone: "Mars/Olympus_Mons" } }')).toThrow(/budgets\.timezone: expected an IANA time zone/);
    expect(() => parse('{ budgets: { gateway: { day: {} } } }')).toThrow(/budgets\.gateway\.day: a limit needs "tokens" or "usd"/);
    expect(() => parse('{ budgets: { agents: { default: { month: { usd: -1 } } } } }')).toThrow(/budgets\.agents\.default\.month\.usd/);
    expect(() => parse('{ budgets: { roles: { overlord: { day: { tokens: 1 } } } } }')).toThrow(/budgets\.roles/);
    expect(() => parse('{ budgets: { gateway: { week: { tokens: 1 } } } }')).toThrow(/week/);
  });
});
