import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATH_ESCAPE_HINT, PathEscapeError, normalizeUserPath, resolveInWorkspace } from '../src/index.js';
import { leaksNothing, sandbox } from './fixtures.js';

async function escapeOf(p: Promise<unknown>): Promise<PathEscapeError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PathEscapeError);
  return err as PathEscapeError;
}

describe('resolveInWorkspace', () => {
  it('resolves relative paths and absolute paths inside the workspace', async () => {
    const s = sandbox();
    s.put('notes/todo.md', 'x');
    const rel = await resolveInWorkspace(s.ws, 'notes/./todo.md');
    expect(rel).toMatchObject({ real: path.join(s.ws, 'notes/todo.md'), relative: 'notes/todo.md', exists: true });
    const abs = await resolveInWorkspace(s.ws, path.join(s.ws, 'notes/todo.md'));
    expect(abs.relative).toBe('notes/todo.md');
    expect((await resolveInWorkspace(s.ws, 'notes/../notes/todo.md')).relative).toBe('notes/todo.md');
    expect((await resolveInWorkspace(s.ws, '.')).relative).toBe('.');
  });

  it('accepts the workspace by its real path when configured through a symlink', async () => {
    const s = sandbox();
    s.put('a.txt', 'x');
    const alias = path.join(s.outside, 'ws-alias');
    symlinkSync(s.ws, alias);
    const r = await resolveInWorkspace(alias, path.join(s.ws, 'a.txt'));
    expect(r.relative).toBe('a.txt');
    expect((await resolveInWorkspace(alias, path.join(alias, 'a.txt'))).real).toBe(path.join(s.ws, 'a.txt'));
  });

  it('refuses .. escapes, absolute paths elsewhere and NUL bytes with a helpful, clean message', async () => {
    const s = sandbox();
    for (const p of ['../outside/secret.txt', 'a/../../outside/secret.txt', '..', '/etc/passwd', s.secretFile]) {
      for (const forWrite of [false, true]) {
        const err = await escapeOf(resolveInWorkspace(s.ws, p, { forWrite }));
        expect(err.code).toBe('SWB_E_PATH_ESCAPE');
        expect(err.message).toContain(PATH_ESCAPE_HINT);
        expect(leaksNothing(err.message, s)).toBe(true);
      }
    }
    expect((await escapeOf(resolveInWorkspace(s.ws, 'a\0b'))).message).toContain('NUL');
  });

  it('refuses a symlink inside the workspace that points outside, for reads and writes', async () => {
    const s = sandbox();
    symlinkSync(s.secretFile, path.join(s.ws, 'link.txt'));
    symlinkSync(s.outside, path.join(s.ws, 'outdir'));
    for (const [p, forWrite] of [
      ['link.txt', false],
      ['link.txt', true],
      ['outdir/secret.txt', false],
      ['outdir/new.txt', true],
      ['outdir/deeper/new.txt', true],
    ] as const) {
      const err = await escapeOf(resolveInWorkspace(s.ws, p, { forWrite }));
      expect(err.message).toContain('symbolic link');
      expect(leaksNothing(err.message, s)).toBe(true);
    }
  });

  it('follows a dangling symlink to where a write would land and refuses it when that is outside', async () => {
    const s = sandbox();
    symlinkSync(path.join(s.outside, 'not-yet.txt'), path.join(s.ws, 'dangling'));
    await escapeOf(resolveInWorkspace(s.ws, 'dangling', { forWrite: true }));
    symlinkSync(path.join(s.ws, 'later.txt'), path.join(s.ws, 'inside-dangling'));
    const r = await resolveInWorkspace(s.ws, 'inside-dangling', { forWrite: true });
    expect(r).toMatchObject({ real: path.join(s.ws, 'later.txt'), exists: false });
  });

  it('allows symlinks that stay inside the workspace', async () => {
    const s = sandbox();
    s.put('real/file.txt', 'x');
    symlinkSync(path.join(s.ws, 'real'), path.join(s.ws, 'alias'));
    const r = await resolveInWorkspace(s.ws, 'alias/file.txt');
    expect(r).toMatchObject({ real: path.join(s.ws, 'real/file.txt'), relative: 'alias/file.txt' });
  });

  it('resolves missing write targets under existing ancestors and refuses missing read targets', async () => {
    const s = sandbox();
    mkdirSync(path.join(s.ws, 'a'));
    const r = await resolveInWorkspace(s.ws, 'a/b/c.txt', { forWrite: true });
    expect(r).toMatchObject({ real: path.join(s.ws, 'a/b/c.txt'), exists: false });
    await expect(resolveInWorkspace(s.ws, 'a/b/c.txt')).rejects.toMatchObject({
      code: 'SWB_E_FILE_NOT_FOUND',
      message: 'a/b/c.txt does not exist',
    });
  });

  it('reports a missing workspace without naming it', async () => {
    const s = sandbox();
    const gone = path.join(s.outside, 'nope');
    const err = await resolveInWorkspace(gone, 'a').catch((e: Error & { code: string }) => e);
    expect(err).toMatchObject({ code: 'SWB_E_WORKSPACE' });
    expect((err as Error).message).not.toContain(gone);
  });
});

describe('normalizeUserPath', () => {
  it('folds ./ and .. and drops trailing slashes for permission rules', () => {
    expect(normalizeUserPath('./notes/todo.md')).toBe('notes/todo.md');
    expect(normalizeUserPath('notes/../secrets/x')).toBe('secrets/x');
    expect(normalizeUserPath('notes/')).toBe('notes');
    expect(normalizeUserPath('.')).toBe('.');
    expect(normalizeUserPath('../x')).toBe('../x');
  });
});
