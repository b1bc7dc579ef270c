import { describe, expect, it } from 'vitest';
import { applicableBudgets, type BudgetSettings, effectiveBudgets, mergeSpec, type BudgetOverride } from '../../src/index.js';

const settings = (over: Partial<BudgetSettings> = {}): BudgetSettings => ({
  timezone: 'UTC',
  agents: new Map(),
  roles: new Map(),
  principals: new Map(),
  ...over,
});

const override = (scope: BudgetOverride['scope'], id: string, spec: BudgetOverride['spec']): [string, BudgetOverride] => [
  `${scope}:${id}`,
  { scope, id, spec, updatedBy: 'operator:test', updatedAt: new Date(0) },
];

describe('budget limits', () => {
  it("a principal's own budget replaces its role's default; without one the role's applies, counted on the principal's own spend", () => {
    const s = settings({
      roles: new Map([['member', { day: { tokens: 5000 } }]]),
      principals: new Map([['p_vip', { month: { usd: 100 } }]]),
      agents: new Map([['default', { day: { usd: 20 } }]]),
      gateway: { month: { tokens: 1e9 } },
    });
    const eff = effectiveBudgets(s, new Map());
    const vip = applicableBudgets(eff, { principalId: 'p_vip', role: 'member', agentId: 'default' });
    expect(vip.map((b) => `${b.scope}:${b.id}`)).toEqual(['principal:p_vip', 'agent:default', 'gateway:']);
    expect(vip[0]!.counts).toEqual({ kind: 'principal', principalId: 'p_vip' });
    const member = applicableBudgets(eff, { principalId: 'p_1', role: 'member', agentId: 'other' });
    expect(member.map((b) => `${b.scope}:${b.id}`)).toEqual(['role:member', 'gateway:']);
    expect(member[0]!.counts).toEqual({ kind: 'principal', principalId: 'p_1' });
    // A sender without a principal has no person budget, whatever the guest role says.
    const guest = applicableBudgets(effectiveBudgets(settings({ roles: new Map([['guest', { day: { tokens: 1 } }]]) }), new Map()), {
      principalId: null,
      role: 'guest',
      agentId: 'default',
    });
    expect(guest).toEqual([]);
  });

  it('no budget applies unless one is configured or overridden', () => {
    expect(applicableBudgets(effectiveBudgets(settings(), new Map()), { principalId: 'p', role: 'owner', agentId: 'default' })).toEqual([]);
  });

  it('an override wins per period: its day replaces the configured day, the configured month stays', () => {
    expect(mergeSpec({ day: { tokens: 1 }, month: { usd: 5 } }, { day: { tokens: 9 } })).toEqual({ day: { tokens: 9 }, month: { usd: 5 } });
    expect(mergeSpec(undefined, { month: { usd: 1 } })).toEqual({ month: { usd: 1 } });
    expect(mergeSpec({ day: { tokens: 1 } }, undefined)).toEqual({ day: { tokens: 1 } });
    const eff = effectiveBudgets(
      settings({ roles: new Map([['member', { day: { tokens: 5000 }, month: { usd: 10 } }]]) }),
      new Map([
        override('role', 'member', { day: { tokens: 50_000 } }),
        override('gateway', '', { day: { usd: 3 } }),
        override('principal', 'p2', { day: { tokens: 7 } }),
      ]),
    );
    expect(eff).toEqual({
      gateway: { day: { usd: 3 } },
      agents: {},
      roles: { member: { day: { tokens: 50_000 }, month: { usd: 10 } } },
      principals: { p2: { day: { tokens: 7 } } },
    });
  });

  it('ids from outside are own properties: "__proto__" is a principal like any other and "constructor" matches nothing', () => {
    const eff = effectiveBudgets(settings(), new Map([override('principal', '__proto__', { day: { tokens: 3 } })]));
    expect(Object.keys(eff.principals)).toEqual(['__proto__']);
    expect(applicableBudgets(eff, { principalId: '__proto__', role: 'member', agentId: 'a' }).map((b) => b.scope)).toEqual(['principal']);
    expect(applicableBudgets(eff, { principalId: 'constructor', role: 'toString', agentId: 'hasOwnProperty' })).toEqual([]);
  });
});
