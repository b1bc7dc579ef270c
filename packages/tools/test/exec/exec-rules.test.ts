import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeCommand, type ExecChecks, loadExecChecks } from '../../src/exec/index.js';
import { decodeAnsiC } from '../../src/exec/shell-words.js';

let root: string;
let ws: string;
let checks: ExecChecks;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'exec-rules-'));
  ws = path.join(root, 'ws');
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  checks = await loadExecChecks();
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('ruleContents', () => {
  it('gives one content per simple command, quotes removed, whitespace single', () => {
    expect(checks.ruleContents({ command: 'npm   test && git status | grep -c "modified:"' })).toEqual(['npm test', 'git status', 'grep -c modified:']);
    expect(checks.ruleContents({ command: "r''m -rf /" })).toEqual(['rm -rf /']);
    expect(checks.ruleContents({ command: "$'\\x72m' -rf /" })).toEqual(['rm -rf /']);
  });

  it('lists command substitutions before the command that uses them, and keeps an expansion as written', () => {
    expect(checks.ruleContents({ command: 'echo $(curl evil) `id`' })).toEqual(['curl evil', 'id', 'echo $(curl evil) `id`']);
    expect(checks.ruleContents({ command: 'FOO=1 "$CMD" x' })).toEqual(['FOO=1 "$CMD" x']);
  });

  it('keeps file redirections as operator and target, except to /dev/null', () => {
    expect(checks.ruleContents({ command: 'echo hi > notes.txt' })).toEqual(['echo hi >notes.txt']);
    expect(checks.ruleContents({ command: 'echo "a" >> "my file" 2>/dev/null' })).toEqual(['echo a >>my file']);
    expect(checks.ruleContents({ command: '{ echo a; } > f' })).toEqual(['echo a >f']);
    expect(checks.ruleContents({ command: 'npm test 2>&1 | tee log' })).toEqual(['npm test', 'tee log']);
  });

  it('gives the command a wrapper runs a content of its own, with its options intact', () => {
    expect(checks.ruleContents({ command: 'timeout 5 rm -rf build' })).toEqual(['timeout 5 rm -rf build', 'rm -rf build']);
    expect(checks.ruleContents({ command: 'nice -n 5 timeout -s KILL 3 rm x' })).toEqual([
      'nice -n 5 timeout -s KILL 3 rm x',
      'timeout -s KILL 3 rm x',
      'rm x',
    ]);
    expect(checks.ruleContents({ command: '/usr/bin/env FOO=1 npm test' })).toEqual(['/usr/bin/env FOO=1 npm test', 'npm test']);
    expect(checks.ruleContents({ command: 'command -v ls' })).toEqual(['command -v ls']);
  });

  it('keeps a line the parser rejects whole', () => {
    expect(checks.ruleContents({ command: 'echo "oops' })).toEqual(['echo "oops']);
  });
});

describe('analysis details', () => {
  it('names each part with its kind and outcome', () => {
    const result = checks.analyze('cat a.txt | sh', { workspace: ws });
    expect(result.parts).toEqual([
      expect.objectContaining({ content: 'cat a.txt', kind: 'read', outcome: 'allow' }),
      expect.objectContaining({ content: 'sh', kind: 'other', outcome: 'ask' }),
    ]);
    expect(result.reason).toContain('sh');
  });

  it('follows cd for later parts, and a subshell scopes it', () => {
    // From src, `..` is the workspace root: a dangerous removal, not a harmless one.
    expect(checks.analyze('cd src && rm -rf ..', { workspace: ws }).outcome).toBe('ask');
    // After the subshell, the cwd is the root again: `..` leaves the workspace.
    expect(checks.analyze('(cd src) && cat ../x', { workspace: ws })).toMatchObject({ outcome: 'ask', source: 'safety' });
    expect(checks.analyze('cat ../x', { workspace: ws, cwd: 'src' })).toMatchObject({ outcome: 'allow', readOnly: true });
  });

  it('refuses a working directory outside the workspace', () => {
    const result = checks.analyze('ls', { workspace: ws, cwd: '..' });
    expect(result).toMatchObject({ outcome: 'deny', source: 'safety' });
    expect(result.parts.map((part) => part.outcome)).toEqual(['deny']);
  });

  it('judges the command a wrapper runs', () => {
    for (const command of [
      'env rm -rf /',
      'command rm -rf /',
      'sudo rm -rf /',
      'timeout 5 rm -rf /',
      'nice -n 5 touch /tmp/x',
      '/bin/rm -rf /',
      '\\rm -rf /',
    ]) {
      expect(checks.analyze(command, { workspace: ws }).outcome, command).toBe('deny');
    }
    expect(checks.analyze('env -S "rm -rf /"', { workspace: ws })).toMatchObject({ outcome: 'ask', source: 'safety' });
    // The wrapped command keeps its own options: `timeout 5 rm -rf .` is a dangerous removal, not `rm .`.
    expect(checks.analyze('timeout 5 rm -rf .', { workspace: ws })).toMatchObject({ outcome: 'ask', source: 'safety' });
    expect(checks.analyze('timeout -k 1 5 find . -delete', { workspace: ws })).toMatchObject({ outcome: 'ask', source: 'safety' });
    expect(checks.analyze('timeout 5 -- sed -i s/a/b/ f', { workspace: ws }).readOnly).toBe(false);
    expect(checks.analyze('timeout 5 sed -i s/a/b/ f', { workspace: ws }).parts.map((part) => part.content)).toEqual([
      'timeout 5 sed -i s/a/b/ f',
      'sed -i s/a/b/ f',
    ]);
    expect(checks.analyze('ls | xargs -n 1 rm -rf', { workspace: ws })).toMatchObject({ outcome: 'ask', source: 'safety' });
    expect(checks.analyze('ls | xargs rm -rf', { workspace: ws })).toMatchObject({ outcome: 'ask', source: 'safety' });
    expect(checks.analyze('find . -exec rm -rf / \\;', { workspace: ws }).outcome).toBe('deny');
  });

  it('resolves ~ against the given home', () => {
    expect(checks.analyze('cat ~/x', { workspace: ws, home: path.join(ws, 'src') })).toMatchObject({ outcome: 'allow', readOnly: true });
    expect(checks.analyze('rm -rf ~', { workspace: ws, home: path.join(ws, 'src') })).toMatchObject({ outcome: 'ask', source: 'safety' });
  });

  it('analyzeCommand loads the grammar once and answers asynchronously', async () => {
    await expect(analyzeCommand('git log', { workspace: ws })).resolves.toMatchObject({ outcome: 'allow', readOnly: true });
    await expect(analyzeCommand('git log --output=/tmp/x', { workspace: ws })).resolves.toMatchObject({ outcome: 'deny' });
  });
});

describe('limits', () => {
  it('a nesting too deep to walk is a safety ask, not a crash', () => {
    const deep = `echo ${'$('.repeat(3000)}ls${')'.repeat(3000)}`;
    expect(checks.analyze(deep, { workspace: ws })).toMatchObject({ outcome: 'ask', source: 'safety', readOnly: false });
  });

  it('judges a long chain part by part', () => {
    const chain = Array.from({ length: 500 }, (_, i) => `echo ${i}`).join(' && ');
    const result = checks.analyze(`${chain}; touch /tmp/x`, { workspace: ws });
    expect(result.parts).toHaveLength(501);
    expect(result.outcome).toBe('deny');
  });
});

describe('decodeAnsiC', () => {
  it('decodes the escapes bash does', () => {
    expect(decodeAnsiC('\\x72m')).toBe('rm');
    expect(decodeAnsiC('\\162\\155')).toBe('rm');
    expect(decodeAnsiC('\\u0072m')).toBe('rm');
    expect(decodeAnsiC("a\\tb\\'c")).toBe("a\tb'c");
  });
});
