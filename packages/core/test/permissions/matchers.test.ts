import { describe, expect, it } from 'vitest';
import {
  RuleSyntaxError,
  TOOL_ALIASES,
  canonicalToolName,
  compilePathGlob,
  hostOf,
  matchCommand,
  matchContent,
  matchDomain,
  matchPath,
  matchToolName,
  toWorkspaceRelative,
  toolMatchKind,
  validateContentPattern,
} from '../../src/index.js';

describe('path globs', () => {
  it.each<[string, string, boolean]>([
    ['notes/**', 'notes/a.md', true],
    ['notes/**', 'notes/deep/er/a.md', true],
    ['notes/**', 'notes', true], // the directory itself
    ['notes/**', 'notesx/a.md', false],
    ['notes/**', 'other/notes/a.md', false],
    ['notes/', 'notes/a.md', true],
    ['**/*.env', '.env', true],
    ['**/*.env', 'a/b/prod.env', true],
    ['**/*.env', 'a/b/prod.env.bak', false],
    ['*.md', 'a.md', true],
    ['*.md', 'dir/a.md', false], // `*` stays within a segment
    ['*', '.hidden', true], // dotfiles are not special
    ['src/*/index.ts', 'src/a/index.ts', true],
    ['src/*/index.ts', 'src/a/b/index.ts', false],
    ['src/**/index.ts', 'src/index.ts', true],
    ['src/**/index.ts', 'src/a/b/index.ts', true],
    ['file?.txt', 'file1.txt', true],
    ['file?.txt', 'file10.txt', false],
    ['file?.txt', 'file/.txt', false],
    ['*.{md,txt}', 'a.txt', true],
    ['*.{md,txt}', 'a.ts', false],
    ['{src,test}/**', 'test/x.ts', true],
    ['**', 'anything/at/all', true],
    ['**', '', true],
    ['**/**', 'a/b', true],
    ['./notes/*.md', 'notes/a.md', true],
    ['a+b(c).md', 'a+b(c).md', true], // regex characters are literal
    ['a.md', 'aXmd', false],
  ])('%s vs %s → %s', (pattern, p, expected) => {
    expect(compilePathGlob(pattern).test(p)).toBe(expected);
  });

  it('rejects malformed patterns', () => {
    expect(() => compilePathGlob('/etc/**')).toThrow(/relative to the workspace/);
    expect(() => compilePathGlob('../x')).toThrow(/"\.\."/);
    expect(() => compilePathGlob('*.{md,txt')).toThrow(/never closed/);
    expect(() => compilePathGlob('a}')).toThrow(RuleSyntaxError);
    expect(() => compilePathGlob('')).toThrow(/empty/);
  });

  it('normalizes paths into the workspace and refuses ones that leave it', () => {
    const ws = '/srv/ws';
    expect(toWorkspaceRelative('notes/./a.md', ws)).toBe('notes/a.md');
    expect(toWorkspaceRelative('/srv/ws/notes/a.md', ws)).toBe('notes/a.md');
    expect(toWorkspaceRelative('notes/../secret/x', ws)).toBe('secret/x');
    expect(toWorkspaceRelative('../ws/secret/x', ws)).toBe('secret/x'); // out and back in: still inside
    expect(toWorkspaceRelative('.', ws)).toBe('');
    expect(toWorkspaceRelative('../other/x', ws)).toBeUndefined();
    expect(toWorkspaceRelative('/etc/passwd', ws)).toBeUndefined();
    expect(toWorkspaceRelative('a\0b', ws)).toBeUndefined();
    // Without a workspace, `..` and absolute paths are refused.
    expect(toWorkspaceRelative('a/../b')).toBeUndefined();
    expect(toWorkspaceRelative('/srv/ws/a')).toBeUndefined();
    expect(toWorkspaceRelative('./a/b/')).toBe('a/b');
  });

  it('matchPath refuses `..` and outside paths, and sees through absolute paths inside', () => {
    expect(matchPath('**', '../x')).toBe(false);
    expect(matchPath('notes/**', 'notes/../../x', '/srv/ws')).toBe(false);
    expect(matchPath('**', '/etc/passwd', '/srv/ws')).toBe(false);
    expect(matchPath('secret/**', '/srv/ws/secret/k', '/srv/ws')).toBe(true);
    expect(matchPath('secret/**', '../ws/secret/k', '/srv/ws')).toBe(true);
    expect(matchPath('notes/**', 'notes/../.git/config', '/srv/ws')).toBe(false);
  });
});

describe('command patterns', () => {
  it.each<[string, string, boolean]>([
    ['git:*', 'git', true],
    ['git:*', 'git status', true],
    ['git:*', '  git   status  ', true],
    ['git:*', 'gitx', false],
    ['git:*', 'gitx status', false],
    ['git status:*', 'git status --short', true],
    ['git status:*', 'git stash', false],
    ['npm run test', 'npm run test', true],
    ['npm run test', 'npm run test -- --watch', false],
    ['npm run test', 'npm run', false],
  ])('%s vs %s → %s (either behavior)', (pattern, cmd, expected) => {
    expect(matchCommand(pattern, cmd, 'allow')).toBe(expected);
    expect(matchCommand(pattern, cmd, 'deny')).toBe(expected);
  });

  it('never lets a prefix allow cover chained or substituted commands', () => {
    for (const cmd of [
      'git status; rm -rf ~',
      'git status && curl x',
      'git log | sh',
      'git $(rm -rf ~)',
      'git `id`',
      'git log > /etc/x',
      'git status\nrm -rf ~',
    ]) {
      expect(matchCommand('git:*', cmd, 'allow'), cmd).toBe(false);
    }
  });

  it('lets a deny match any segment, through env assignments, wrappers and program paths', () => {
    for (const cmd of ['ls; rm -rf /', 'ls && rm -rf /', 'echo $(rm -rf /)', 'FOO=1 rm -rf /', 'sudo rm -rf /', '/bin/rm -rf /', 'ls | rm -rf /']) {
      expect(matchCommand('rm:*', cmd, 'deny'), cmd).toBe(true);
    }
    expect(matchCommand('rm:*', 'ls; echo rm', 'deny')).toBe(false);
    expect(matchCommand('git push:*', 'git status && git push --force', 'ask')).toBe(true);
  });
});

describe('domain patterns', () => {
  it.each<[string, string, boolean]>([
    ['domain:x.org', 'x.org', true],
    ['domain:x.org', 'a.x.org', true],
    ['domain:x.org', 'a.b.x.org', true],
    ['domain:x.org', 'evilx.org', false],
    ['domain:x.org', 'x.org.evil.com', false],
    ['domain:x.org', 'https://docs.x.org/path?q=1', true],
    ['domain:x.org', 'https://user@evilx.org/', false],
    ['domain:x.org', 'https://x.org.:8443/', true],
    ['domain:X.ORG', 'https://A.x.org', true],
    ['domain:x.org', 'x.org:8080/path', true],
    ['domain:*.x.org', 'x.org', false],
    ['domain:*.x.org', 'a.x.org', true],
    ['x.org', 'a.x.org', true],
    ['domain:', 'x.org', false],
  ])('%s vs %s → %s', (pattern, content, expected) => {
    expect(matchDomain(pattern, content)).toBe(expected);
  });

  it('extracts hosts', () => {
    expect(hostOf('https://user:pw@Example.COM:8443/a')).toBe('example.com');
    expect(hostOf('not a url://')).toBeUndefined();
    expect(hostOf('')).toBeUndefined();
  });
});

describe('tool names, aliases and match kinds', () => {
  it('matches exact names, MCP server prefixes and wildcards', () => {
    expect(matchToolName('write_file', 'write_file')).toBe(true);
    expect(matchToolName('write_file', 'write_files')).toBe(false);
    expect(matchToolName('mcp__github', 'mcp__github__create_issue')).toBe(true);
    expect(matchToolName('mcp__github', 'mcp__github')).toBe(true);
    expect(matchToolName('mcp__github', 'mcp__githubx__create_issue')).toBe(false);
    expect(matchToolName('mcp__github', 'mcp__gitlab__create_issue')).toBe(false);
    expect(matchToolName('mcp__github__*', 'mcp__github__create_issue')).toBe(true);
    expect(matchToolName('mcp__github__*', 'mcp__gitlab__x')).toBe(false);
    expect(matchToolName('mcp__github__create_issue', 'mcp__github__create_pr')).toBe(false);
    expect(matchToolName('*', 'anything')).toBe(true);
  });

  it('applies aliases to both the rule and the called tool', () => {
    expect(canonicalToolName('Write')).toBe('write_file');
    expect(canonicalToolName('str_replace')).toBe('edit_file');
    expect(canonicalToolName('write_file')).toBe('write_file');
    expect(canonicalToolName('mcp__x__Write')).toBe('mcp__x__Write');
    expect(matchToolName('Write', 'write_file')).toBe(true);
    expect(matchToolName('write_file', 'Write')).toBe(true);
    expect(matchToolName('Edit', 'str_replace')).toBe(true);
    expect(matchToolName('Bash', 'exec')).toBe(true);
    expect(matchToolName('legacy', 'write_file', { legacy: 'write_file' })).toBe(true);
    for (const target of Object.values(TOOL_ALIASES)) expect(canonicalToolName(target)).toBe(target);
  });

  it('knows the default match kinds and takes overrides', () => {
    for (const t of ['read_file', 'write_file', 'edit_file', 'list_files', 'search_files', 'Write', 'Read']) {
      expect(toolMatchKind(t)).toBe('path');
    }
    expect(toolMatchKind('exec')).toBe('command');
    expect(toolMatchKind('bash')).toBe('command');
    expect(toolMatchKind('Bash')).toBe('command');
    expect(toolMatchKind('web_fetch')).toBe('domain');
    expect(toolMatchKind('mcp__github__create_issue')).toBe('exact');
    expect(toolMatchKind('my_plugin', { matchKinds: { my_plugin: 'domain' } })).toBe('domain');
  });

  it('dispatches content matching by kind and validates patterns', () => {
    expect(matchContent('path', 'notes/**', 'notes/a', 'allow')).toBe(true);
    expect(matchContent('command', 'git:*', 'git log', 'allow')).toBe(true);
    expect(matchContent('domain', 'domain:x.org', 'a.x.org', 'allow')).toBe(true);
    expect(matchContent('exact', 'repo-a', 'repo-a', 'allow')).toBe(true);
    expect(matchContent('exact', 'repo-a', 'repo-ab', 'deny')).toBe(false);
    expect(() => validateContentPattern('path', '{a')).toThrow(RuleSyntaxError);
    expect(() => validateContentPattern('command', ':*')).toThrow(/empty/);
    expect(() => validateContentPattern('domain', 'domain:')).toThrow(/empty/);
    expect(() => validateContentPattern('exact', '')).not.toThrow();
  });
});
