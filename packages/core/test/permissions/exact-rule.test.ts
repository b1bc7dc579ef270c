import { describe, expect, it } from 'vitest';
import { evaluateRules, type RuleSet } from '../../src/permissions/scopes.js';
import { exactRuleFor } from '../../src/permissions/exact-rule.js';
import { parseRule } from '../../src/permissions/rules.js';
import type { MatchKind } from '../../src/permissions/matchers.js';

/** A seeded PRNG (mulberry32), so a failing case can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SPECIAL = ['*', '**', '?', '[', ']', '{', '}', ',', '(', ')', '\\', ' ', '.', '..', '-', ':', 'literal:', '!', '$', '~', '#'];
const PLAIN = 'abcXYZ019_';
const RUNS = Number(process.env.PROPERTY_RUNS ?? 2000);
const WORKSPACE = '/srv/ws';

function fileName(r: () => number): string {
  let s = '';
  const n = 1 + Math.floor(r() * 6);
  for (let i = 0; i < n; i++) s += r() < 0.5 ? SPECIAL[Math.floor(r() * SPECIAL.length)] : PLAIN[Math.floor(r() * PLAIN.length)];
  return s;
}

/** A random path inside the workspace: 1–3 segments, none of them `.` or `..` or empty. */
function randomPath(r: () => number): string {
  const segs: string[] = [];
  const n = 1 + Math.floor(r() * 3);
  while (segs.length < n) {
    const s = fileName(r).replace(/\//gu, '');
    if (s !== '' && s !== '.' && s !== '..') segs.push(s);
  }
  return segs.join('/');
}

/** Whether the saved rule, as the only rule in force, allows `tool` with `content`. */
function allows(rule: string, tool: string, content: string): boolean {
  const set: RuleSet = [{ scope: { kind: 'session', id: 's1' }, behavior: 'allow', rule, source: 'approval' }];
  return evaluateRules(set, tool, content, [{ kind: 'session', id: 's1' }], { workspace: WORKSPACE }).behavior === 'allow';
}

describe('exactRuleFor: "always allow" saves a rule that matches exactly the approved call', () => {
  it(`paths (${RUNS} random file names with glob and rule-grammar characters)`, () => {
    for (let seed = 1; seed <= RUNS; seed++) {
      const r = rng(seed);
      const approved = randomPath(r);
      let other = randomPath(r);
      if (other === approved) other = `${approved}x`;
      const rule = exactRuleFor('write_file', approved, 'path', WORKSPACE);
      const ctx = `seed ${seed}: approved ${JSON.stringify(approved)}, rule ${rule}, other ${JSON.stringify(other)}`;
      expect(() => parseRule(rule), ctx).not.toThrow();
      expect(allows(rule, 'write_file', approved), ctx).toBe(true);
      expect(allows(rule, 'write_file', `./${approved}`), ctx).toBe(true);
      expect(allows(rule, 'write_file', `${WORKSPACE}/${approved}`), ctx).toBe(true);
      expect(allows(rule, 'write_file', other), ctx).toBe(false);
      expect(allows(rule, 'write_file', `${approved}/below`), ctx).toBe(false);
      expect(allows(rule, 'read_file', approved), ctx).toBe(false);
    }
  });

  it.each<[MatchKind, string, string[]]>([
    ['command', 'git:*', ['git status', 'git']],
    ['command', 'npm run test', ['npm run test; rm -rf ~', 'npm run  test2']],
    ['command', 'echo "a  b"', ['echo "a b"']],
    ['domain', 'https://example.org/a', ['https://sub.example.org/a', 'https://example.org/b']],
    ['exact', 'literal:x', ['x']],
  ])('%s content %s matches itself only', (kind, content, others) => {
    const tool = kind === 'command' ? 'exec' : kind === 'domain' ? 'web_fetch' : 'custom';
    const rule = exactRuleFor(tool, content, kind, WORKSPACE);
    expect(allows(rule, tool, content)).toBe(true);
    for (const o of others) expect(allows(rule, tool, o), `${rule} vs ${o}`).toBe(false);
  });

  it('keeps simple paths and commands readable', () => {
    expect(exactRuleFor('write_file', 'notes/a.md', 'path', WORKSPACE)).toBe('write_file(notes/a.md)');
    expect(exactRuleFor('write_file', `${WORKSPACE}/notes/a.md`, 'path', WORKSPACE)).toBe('write_file(notes/a.md)');
    expect(exactRuleFor('write_file', '**', 'path', WORKSPACE)).toBe('write_file(literal:**)');
    expect(exactRuleFor('write_file', 'a(b)', 'path', WORKSPACE)).toBe('write_file(literal:a\\(b\\))');
    expect(exactRuleFor('exec', 'npm run test', 'command', WORKSPACE)).toBe('exec(npm run test)');
    expect(exactRuleFor('mcp__fx__slow', undefined, 'exact', WORKSPACE)).toBe('mcp__fx__slow');
  });
});
