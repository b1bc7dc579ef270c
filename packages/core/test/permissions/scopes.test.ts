import { describe, expect, it } from 'vitest';
import { RuleSyntaxError, SCOPE_ORDER, evaluateRules, scopeApplies, scopesOf, validateRuleSet, type ScopedRule } from '../../src/index.js';

const call = scopesOf({ agent: 'main', channel: 'telegram:bot', conversation: 'dm:1', role: 'member', principal: 'p1', session: 's1' });
const at = (kind: ScopedRule['scope']['kind'], behavior: ScopedRule['behavior'], rule: string, id?: string): ScopedRule => ({
  scope: id === undefined ? { kind } : { kind, id },
  behavior,
  rule,
  source: 'config',
});

describe('scopes', () => {
  it('lists the scopes broad to narrow', () => {
    expect(SCOPE_ORDER).toEqual(['gateway', 'agent', 'channel', 'conversation', 'role', 'principal', 'session']);
    expect(call.map((s) => s.kind)).toEqual(SCOPE_ORDER);
    expect(scopesOf({ principal: 'p' })).toEqual([{ kind: 'gateway' }, { kind: 'principal', id: 'p' }]);
  });

  it('applies the gateway always, ids exactly, and id-less scopes to every instance the call has', () => {
    expect(scopeApplies({ kind: 'gateway' }, [])).toBe(true);
    expect(scopeApplies({ kind: 'principal', id: 'p1' }, call)).toBe(true);
    expect(scopeApplies({ kind: 'principal', id: 'p2' }, call)).toBe(false);
    expect(scopeApplies({ kind: 'session' }, call)).toBe(true);
    expect(scopeApplies({ kind: 'session' }, scopesOf({}))).toBe(false);
  });
});

describe('evaluateRules', () => {
  it('returns none when nothing applies', () => {
    expect(evaluateRules([], 'write_file', 'a', call)).toEqual({ behavior: 'none' });
    expect(evaluateRules([at('principal', 'deny', 'write_file', 'p2')], 'write_file', 'a', call)).toEqual({ behavior: 'none' });
  });

  it('deny beats ask beats allow at any scope, even when the allow is narrower', () => {
    const deny = at('gateway', 'deny', 'write_file(secrets/**)');
    const ask = at('agent', 'ask', 'write_file', 'main');
    const allow = at('session', 'allow', 'write_file(secrets/a.txt)', 's1');
    expect(evaluateRules([allow, ask, deny], 'write_file', 'secrets/a.txt', call)).toEqual({ behavior: 'deny', matched: deny });
    expect(evaluateRules([allow, ask], 'write_file', 'secrets/a.txt', call)).toEqual({ behavior: 'ask', matched: ask });
    expect(evaluateRules([allow], 'write_file', 'secrets/a.txt', call)).toEqual({ behavior: 'allow', matched: allow });
    // And a narrow deny beats a broad allow.
    const narrowDeny = at('session', 'deny', 'write_file', 's1');
    expect(evaluateRules([at('gateway', 'allow', 'write_file'), narrowDeny], 'write_file', 'x', call).matched).toBe(narrowDeny);
  });

  it('reports the broadest rule of the winning behavior', () => {
    const a = at('principal', 'deny', 'write_file', 'p1');
    const b = at('channel', 'deny', 'write_file(**)', 'telegram:bot');
    expect(evaluateRules([a, b], 'write_file', 'x', call).matched).toBe(b);
  });

  it('content rules need content; content-less rules cover every call', () => {
    const r = at('gateway', 'deny', 'read_file(**/*.env)');
    expect(evaluateRules([r], 'read_file', 'config/prod.env', call).behavior).toBe('deny');
    expect(evaluateRules([r], 'read_file', 'config/prod.txt', call).behavior).toBe('none');
    expect(evaluateRules([r], 'read_file', undefined, call).behavior).toBe('none');
    expect(evaluateRules([at('gateway', 'deny', 'read_file')], 'read_file', undefined, call).behavior).toBe('deny');
  });

  it('uses the called tool’s match kind, aliases and MCP prefixes', () => {
    const rules = [at('gateway', 'deny', 'Write(notes/**)'), at('gateway', 'ask', 'mcp__github'), at('gateway', 'allow', 'exec(git:*)')];
    expect(evaluateRules(rules, 'write_file', 'notes/x', call).behavior).toBe('deny');
    expect(evaluateRules(rules, 'mcp__github__create_issue', undefined, call).behavior).toBe('ask');
    expect(evaluateRules(rules, 'bash', 'git status', call).behavior).toBe('allow');
    expect(evaluateRules(rules, 'bash', 'git status; rm -rf ~', call).behavior).toBe('none');
    expect(evaluateRules([at('gateway', 'allow', 'web_fetch(domain:x.org)')], 'web_fetch', 'https://evilx.org', call).behavior).toBe('none');
  });

  it('places absolute and `..` paths in the workspace before matching', () => {
    const r = at('gateway', 'deny', 'read_file(secret/**)');
    expect(evaluateRules([r], 'read_file', '/ws/secret/k', call, { workspace: '/ws' }).behavior).toBe('deny');
    expect(evaluateRules([r], 'read_file', '../ws/secret/k', call, { workspace: '/ws' }).behavior).toBe('deny');
  });

  it('fails closed on a malformed deny or ask rule, and ignores a malformed allow rule', () => {
    expect(() => evaluateRules([at('gateway', 'deny', 'write_file(')], 'read_file', 'x', call)).toThrow(RuleSyntaxError);
    expect(() => evaluateRules([at('gateway', 'ask', 'write_file({a)')], 'write_file', 'x', call)).toThrow(RuleSyntaxError);
    expect(evaluateRules([at('gateway', 'allow', 'write_file(')], 'write_file', 'x', call).behavior).toBe('none');
  });

  it('validates rule sets on load', () => {
    const problems = validateRuleSet([
      at('gateway', 'allow', 'write_file(notes/**)'),
      at('gateway', 'deny', 'write_file(notes/**'),
      at('gateway', 'deny', 'read_file(/etc/**)'),
      at('gateway', 'deny', 'exec(:*)'),
      { scope: { kind: 'gateway', id: 'x' }, behavior: 'deny', rule: 'a', source: 'config' },
      { scope: { kind: 'planet' as 'gateway' }, behavior: 'deny', rule: 'a', source: 'config' },
    ]);
    expect(problems.map((p) => p.index)).toEqual([1, 2, 3, 4, 5]);
    expect(problems[1]?.message).toMatch(/relative to the workspace/);
  });
});
