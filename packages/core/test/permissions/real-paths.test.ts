import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decidePermission, realRuleContent, walkFilter } from '../../src/index.js';
import { ctx, env, readFile, rule, writeFile } from './fixtures.js';

let base: string;
let ws: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), 'swb-real-')));
  // The workspace is reached through a link of its own: real paths are relative to its real root.
  mkdirSync(path.join(base, 'real-ws'));
  symlinkSync(path.join(base, 'real-ws'), path.join(base, 'ws'));
  ws = path.join(base, 'ws');
  mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true });
  mkdirSync(path.join(ws, 'protected'));
  writeFileSync(path.join(ws, 'protected', 'a.txt'), 'a');
  symlinkSync('.git', path.join(ws, 'gl'));
  symlinkSync('protected', path.join(ws, 'p2'));
  symlinkSync('protected/new.txt', path.join(ws, 'dangling'));
  mkdirSync(path.join(ws, 'public'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const call = (tool: typeof writeFile, p: string, extra: Parameters<typeof env>[0] = {}) =>
  decidePermission({ tool, input: { path: p, content: 'x' }, ctx: { ...ctx(), workspace: ws } }, env(extra));

describe('realRuleContent', () => {
  it('resolves links, missing tails and dangling links relative to the real root', async () => {
    expect(await realRuleContent('gl/hooks/pre-commit', ws)).toBe('.git/hooks/pre-commit');
    expect(await realRuleContent('p2/sub/deeper/x.txt', ws)).toBe('protected/sub/deeper/x.txt');
    expect(await realRuleContent('dangling', ws)).toBe('protected/new.txt');
    expect(await realRuleContent('public/x', ws)).toBe('public/x');
    expect(await realRuleContent('.', ws)).toBe('.');
    expect(await realRuleContent(path.join(ws, 'p2', 'a.txt'), ws)).toBe('protected/a.txt');
  });

  it('a link loop is an error, not a guess', async () => {
    symlinkSync('loop2', path.join(ws, 'loop1'));
    symlinkSync('loop1', path.join(ws, 'loop2'));
    await expect(realRuleContent('loop1/x', ws)).rejects.toThrow(/real location of loop1\/x/);
  });
});

describe('the pipeline sees where a path really leads', () => {
  it('safety: a write through gl -> .git is asked in bypassPermissions mode', async () => {
    const r = await call(writeFile, 'gl/hooks/pre-commit', { mode: 'bypassPermissions' });
    expect(r).toMatchObject({ behavior: 'ask', source: 'safety' });
    expect(r.reason).toContain('gl/hooks/pre-commit leads to .git/hooks/pre-commit');
  });

  it('a deny or ask rule on the real path counts; the reason names both paths', async () => {
    const denied = await call(readFile, 'p2/a.txt', { mode: 'bypassPermissions', ruleSet: [rule('deny', 'read_file(protected/**)')] });
    expect(denied).toMatchObject({ behavior: 'deny', source: 'rule' });
    expect(denied.reason).toContain('p2/a.txt leads to protected/a.txt');
    const asked = await call(writeFile, 'dangling', { mode: 'bypassPermissions', ruleSet: [rule('ask', 'write_file(protected/**)')] });
    expect(asked).toMatchObject({ behavior: 'ask', source: 'rule' });
  });

  it('a rule on the link name still counts', async () => {
    const r = await call(readFile, 'p2/a.txt', { ruleSet: [rule('deny', 'read_file(p2/**)')] });
    expect(r).toMatchObject({ behavior: 'deny', source: 'rule' });
  });

  it('an allow rule must cover the real path as well as the written one', async () => {
    symlinkSync('../protected', path.join(ws, 'public', 'inner'));
    const through = await call(writeFile, 'public/inner/a.txt', { ruleSet: [rule('allow', 'write_file(public/**)')] });
    expect(through).toMatchObject({ behavior: 'ask', source: 'mode' });
    const both = await call(writeFile, 'public/inner/a.txt', { ruleSet: [rule('allow', 'write_file(public/**)'), rule('allow', 'write_file(protected/**)')] });
    expect(both).toMatchObject({ behavior: 'allow', source: 'rule' });
    const plain = await call(writeFile, 'public/b.txt', { ruleSet: [rule('allow', 'write_file(public/**)')] });
    expect(plain).toMatchObject({ behavior: 'allow', source: 'rule' });
  });

  it('a path whose real location cannot be found is refused', async () => {
    symlinkSync('l2', path.join(ws, 'l1'));
    symlinkSync('l1', path.join(ws, 'l2'));
    const r = await call(readFile, 'l1/x', { mode: 'bypassPermissions' });
    expect(r).toMatchObject({ behavior: 'deny', source: 'safety' });
  });
});

describe('walkFilter', () => {
  it('withholds entries denied or asked on the written or the real path; lets the rest through', async () => {
    linkSync(path.join(ws, 'protected', 'a.txt'), path.join(ws, 'public', 'hl.txt'));
    const filter = walkFilter({
      ruleSet: [rule('deny', 'list_files(protected/**)'), rule('ask', 'list_files(public/asked.txt)'), rule('allow', 'list_files(public/**)')],
      scopes: [{ kind: 'gateway' }],
      workspace: ws,
    });
    const at = (rel: string) => filter('list_files', { relative: rel, absolute: path.join(ws, rel) });
    expect(await at('protected')).toBe(false);
    expect(await at('protected/a.txt')).toBe(false);
    expect(await at('p2')).toBe(false);
    expect(await at('p2/a.txt')).toBe(false);
    expect(await at('public/asked.txt')).toBe(false);
    expect(await at('public/b.txt')).toBe(true);
    expect(await at('gl')).toBe(true);
    // Another tool's rules do not apply.
    expect(await filter('search_files', { relative: 'protected/a.txt', absolute: path.join(ws, 'protected', 'a.txt') })).toBe(true);
  });
});

describe('walkFilter without restrictions', () => {
  it('lets every entry through when no deny or ask rule applies to the tool, even unresolvable ones', async () => {
    symlinkSync('m2', path.join(ws, 'm1'));
    symlinkSync('m1', path.join(ws, 'm2'));
    const filter = walkFilter({ ruleSet: [rule('deny', 'write_file(m1/**)'), rule('allow', 'list_files')], scopes: [{ kind: 'gateway' }], workspace: ws });
    expect(await filter('list_files', { relative: 'm1', absolute: path.join(ws, 'm1') })).toBe(true);
    const strict = walkFilter({ ruleSet: [rule('deny', 'list_files(zzz/**)')], scopes: [{ kind: 'gateway' }], workspace: ws });
    // With a restriction in force, an entry whose real location cannot be found is withheld.
    expect(await strict('list_files', { relative: 'm1/x', absolute: path.join(ws, 'm1', 'x') })).toBe(false);
  });
});
