import type { AnyTool } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { singleAlwaysRule, decidePermission, evaluateRules, exactRuleFor, type PermissionMode } from '../../src/index.js';
import { ctx, env, rule } from './fixtures.js';

// A read-only, open-world tool that asks in the mode step, like web_fetch for a domain no rule allows.
const fetchLike: AnyTool = {
  name: 'web_fetch',
  description: 'fetch',
  input: z.strictObject({ url: z.string() }),
  readOnly: true,
  concurrencySafe: true,
  ruleContent: (input) => (input as { url: string }).url,
  checkPermissions: async () => ({ behavior: 'ask', source: 'mode', reason: 'first fetch of this domain' }),
  call: async () => ({ content: '' }),
};
const decide = (mode: PermissionMode, rules = [rule('allow', 'web_fetch(domain:other.org)')]) =>
  decidePermission({ tool: fetchLike, input: { url: 'https://docs.example.org/a' }, ctx: ctx() }, env({ mode, ruleSet: rules }));

describe("a tool's own mode ask is the mode's prompt", () => {
  it.each<[PermissionMode, string, string]>([
    ['default', 'ask', 'mode'],
    ['acceptEdits', 'ask', 'mode'],
    ['plan', 'ask', 'mode'],
    ['dontAsk', 'deny', 'mode'],
    ['bypassPermissions', 'allow', 'mode'],
  ])('in %s mode without a matching rule: %s (%s)', async (mode, behavior, source) => {
    const r = await decide(mode);
    expect({ behavior: r.behavior, source: r.source }).toEqual({ behavior, source });
    if (r.behavior === 'ask') expect(r.reason).toBe('first fetch of this domain');
  });

  it('an allow rule for the domain answers it: no ask, in every asking mode', async () => {
    for (const mode of ['default', 'acceptEdits', 'plan'] as const) {
      const r = await decide(mode, [rule('allow', 'web_fetch(domain:example.org)')]);
      expect(r.behavior, mode).toBe('allow');
      expect(r.source).toBe('rule');
    }
  });

  it('a deny rule still denies and an ask rule still asks as a rule', async () => {
    expect((await decide('default', [rule('deny', 'web_fetch(domain:example.org)')])).behavior).toBe('deny');
    expect(await decide('bypassPermissions', [rule('ask', 'web_fetch(domain:example.org)')])).toMatchObject({ behavior: 'ask', source: 'rule' });
  });
});

describe('alwaysRuleFor', () => {
  const allows = (ruleText: string, content: string) =>
    evaluateRules([rule('allow', ruleText)], 'web_fetch', content, [{ kind: 'gateway' }]).behavior === 'allow';

  it('saves the domain of a web_fetch call, which allows other pages of that host', () => {
    const saved = singleAlwaysRule('web_fetch', 'https://Docs.Example.org:8443/a?b=1', 'domain');
    expect(saved).toBe('web_fetch(domain:docs.example.org)');
    expect(allows(saved, 'https://docs.example.org/other')).toBe(true);
    expect(allows(saved, 'https://evildocs.example.org/')).toBe(false);
    expect(allows(saved, 'https://example.org/')).toBe(false);
    expect(singleAlwaysRule('web_fetch', 'http://[::1]:8080/', 'domain')).toBe('web_fetch(domain:[::1])');
  });

  it('falls back to the exact rule for other kinds and contents without a host', () => {
    expect(singleAlwaysRule('write_file', 'notes/a.md', 'path', '/ws')).toBe(exactRuleFor('write_file', 'notes/a.md', 'path', '/ws'));
    expect(singleAlwaysRule('web_fetch', 'not a url (x)', 'domain')).toBe(exactRuleFor('web_fetch', 'not a url (x)', 'domain'));
    expect(singleAlwaysRule('web_fetch', undefined, 'domain')).toBe('web_fetch');
  });
});
