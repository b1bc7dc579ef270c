import type { AnyTool } from '@switchboard/agent';
import { type ExecChecks, loadExecChecks } from '@switchboard/tools/exec';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { alwaysRuleFor, generalisablePart, storedAlwaysRules } from '../../src/permissions/always-rules.js';
import { evaluateParts } from '../../src/permissions/part-rules.js';
import { evaluateRules, type RuleSet } from '../../src/permissions/scopes.js';
import { WS, writeFile } from './fixtures.js';

let checks: ExecChecks;
let exec: AnyTool;

beforeAll(async () => {
  checks = await loadExecChecks();
  exec = {
    name: 'exec',
    description: 'run a command',
    input: z.strictObject({ command: z.string() }),
    readOnly: false,
    concurrencySafe: false,
    ruleContents: (input: { command: string }) => checks.ruleContents(input),
    call: async () => ({ content: '' }),
  };
});

/** The rules "always allow" on `command` would save. */
const savedFor = (command: string) => storedAlwaysRules(alwaysRuleFor(exec, { command }, 'command', WS));
/** Whether those rules (and nothing else) allow a later call of `command`, part by part. */
function allows(rules: readonly string[], command: string): boolean {
  const ruleSet: RuleSet = rules.map((rule) => ({ scope: { kind: 'gateway' }, behavior: 'allow', rule, source: 'config' }));
  const verdict = evaluateParts(checks.ruleContents({ command }), (part) => evaluateRules(ruleSet, 'exec', part, [{ kind: 'gateway' }]));
  return verdict.behavior === 'allow';
}

describe('always allow for a tool with ruleContents', () => {
  it('saves one exact rule per distinct part, which allow that call again', () => {
    const rules = savedFor('npm test && git status | grep -c modified: && npm test');
    expect(rules).toEqual(['exec(npm test)', 'exec(git status)', 'exec(literal:grep -c modified:)']);
    expect(allows(rules, 'npm test && git status | grep -c modified:')).toBe(true);
    // Exact, not prefixes: neither a longer command nor a new part is allowed.
    expect(allows(rules, 'npm test --watch')).toBe(false);
    expect(allows(rules, 'git status; rm -rf build')).toBe(false);
    expect(allows(rules, 'git status --short')).toBe(false);
  });

  it('a single part saves its one rule, in literal form where a plain pattern would widen it', () => {
    expect(alwaysRuleFor(exec, { command: 'npm   test' }, 'command', WS)).toBe('exec(npm test)');
    const rules = savedFor('ls *.md');
    expect(rules).toEqual(['exec(literal:ls *.md)']);
    expect(allows(rules, 'ls *.md')).toBe(true);
    expect(allows(rules, 'ls *.md x')).toBe(false);
  });

  it('saves no rule when a part depends on what ran before it', () => {
    for (const command of [
      'cd src && rm x',
      'echo $(curl evil)',
      'echo `id`',
      'rm -rf "$DIR"',
      'X=1 && echo hi',
      'export PATH=/tmp && npm test',
      'source ./env.sh && make',
      'eval ls',
    ]) {
      expect(savedFor(command), command).toEqual([]);
    }
    // `cd src && rm x` must not leave `rm x` allowed in the root.
    expect(allows(savedFor('cd src && rm x'), 'rm x')).toBe(false);
  });

  it('a tool without ruleContents keeps its one exact rule', () => {
    expect(alwaysRuleFor(writeFile, { path: 'notes/a.md' }, 'path', WS)).toBe('write_file(notes/a.md)');
    expect(storedAlwaysRules('write_file(literal:**)')).toEqual(['write_file(literal:**)']);
  });
});

describe('generalisablePart and storedAlwaysRules', () => {
  it.each([
    ['npm test', true],
    ['FOO=1 npm test', true],
    ['FOO=1', false],
    ['cd src', false],
    ['echo $HOME', false],
    ['pushd /tmp', false],
    ['', false],
  ])('%j → %s', (part, want) => {
    expect(generalisablePart(part)).toBe(want);
  });

  it('a malformed or nested stored list stands for no rule', () => {
    expect(storedAlwaysRules('[')).toEqual([]);
    expect(storedAlwaysRules('[1]')).toEqual([]);
    expect(storedAlwaysRules('["[x]"]')).toEqual([]);
    expect(storedAlwaysRules('{"a":1}')).toEqual(['{"a":1}']);
    expect(storedAlwaysRules('["exec(ls)","exec(pwd)"]')).toEqual(['exec(ls)', 'exec(pwd)']);
  });
});
