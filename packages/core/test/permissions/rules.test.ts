import { describe, expect, it } from 'vitest';
import { RuleSyntaxError, checkRuleSyntax, escapeRuleContent, parseRule, printRule, type PermissionRule } from '../../src/index.js';

describe('parseRule / printRule', () => {
  it.each<[string, PermissionRule]>([
    ['write_file', { tool: 'write_file' }],
    ['write_file(notes/**)', { tool: 'write_file', content: 'notes/**' }],
    ['exec(git:*)', { tool: 'exec', content: 'git:*' }],
    ['web_fetch(domain:x.org)', { tool: 'web_fetch', content: 'domain:x.org' }],
    ['mcp__github', { tool: 'mcp__github' }],
    ['mcp__github__*', { tool: 'mcp__github__*' }],
    ['exec(echo \\(hi\\))', { tool: 'exec', content: 'echo (hi)' }],
    ['exec(a\\\\b)', { tool: 'exec', content: 'a\\b' }],
    ['exec()', { tool: 'exec', content: '' }],
    ['exec( spaced )', { tool: 'exec', content: ' spaced ' }],
  ])('%s round-trips', (text, rule) => {
    expect(parseRule(text)).toEqual(rule);
    expect(printRule(rule)).toBe(text);
  });

  it('accepts balanced unescaped parentheses and prints them escaped', () => {
    const rule = parseRule('exec(echo (hi))');
    expect(rule).toEqual({ tool: 'exec', content: 'echo (hi)' });
    expect(printRule(rule)).toBe('exec(echo \\(hi\\))');
  });

  it('ignores surrounding whitespace', () => {
    expect(parseRule('  read_file(a)  ')).toEqual({ tool: 'read_file', content: 'a' });
  });

  it.each([
    ['', /tool name is empty/],
    ['(notes/**)', /tool name is empty/],
    ['write_file(notes/**', /never closed/],
    ['exec(echo (hi)', /never closed/],
    ['write_file(a))', /after the closing/],
    ['write_file(a)b', /"b" after the closing/],
    ['write_file)', /without a matching/],
    ['write file', /contains " "/],
    ['exec(a\\', /lone/],
    ['exec(a\\nb)', /unknown escape "\\n"/],
  ])('rejects %j', (text, message) => {
    expect(() => parseRule(text)).toThrow(RuleSyntaxError);
    expect(() => parseRule(text)).toThrow(message);
    const err = (() => {
      try {
        parseRule(text);
      } catch (e) {
        return e as RuleSyntaxError;
      }
      return undefined;
    })();
    expect(err?.code).toBe('SWB_E_RULE_SYNTAX');
    expect(checkRuleSyntax(text).ok).toBe(false);
  });

  it('escapes only parentheses and backslashes', () => {
    expect(escapeRuleContent('a(b)c\\d*e')).toBe('a\\(b\\)c\\\\d*e');
  });

  // Deterministic PRNG so a failure reproduces.
  function rng(seed: number): () => number {
    let s = seed;
    return () => {
      s = (s * 1103515245 + 12345) % 2 ** 31;
      return s / 2 ** 31;
    };
  }
  const ALPHABET = ['(', ')', '\\', 'a', 'Z', '/', '*', ' ', ':', '.', '{', ',', '}', 'é', '\n'];

  it('parseRule(printRule(r)) equals r for arbitrary content (property, 2000 cases)', () => {
    const rand = rng(42);
    for (let n = 0; n < 2000; n++) {
      const len = Math.floor(rand() * 12);
      let content = '';
      for (let i = 0; i < len; i++) content += ALPHABET[Math.floor(rand() * ALPHABET.length)];
      const rule: PermissionRule = rand() < 0.1 ? { tool: 'mcp__srv__t' } : { tool: 'exec', content };
      const printed = printRule(rule);
      expect(parseRule(printed)).toEqual(rule);
      // Printed rules are canonical: printing the parse gives the same text back.
      expect(printRule(parseRule(printed))).toBe(printed);
    }
  });
});
