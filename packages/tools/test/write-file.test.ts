import { chmodSync, existsSync, readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWriteFileTool, PATH_ESCAPE_HINT } from '../src/index.js';
import { fails, leaksNothing, run, sandbox, SECRET } from './fixtures.js';

describe('write_file', () => {
  const tool = createWriteFileTool();

  it('creates a file and its parent directories', async () => {
    const s = sandbox();
    const out = await run(tool, { path: 'notes/2024/todo.md', content: 'héllo\n' }, s.ctx());
    expect(out).toBe('Wrote 7 bytes to notes/2024/todo.md');
    expect(readFileSync(path.join(s.ws, 'notes/2024/todo.md'), 'utf8')).toBe('héllo\n');
  });

  it('replaces an existing file atomically, keeping its mode and leaving no temp files', async () => {
    const s = sandbox();
    const file = s.put('run.sh', 'old');
    chmodSync(file, 0o775);
    const before = statSync(file).ino;
    expect(await run(tool, { path: './run.sh', content: 'echo new' }, s.ctx())).toBe('Wrote 8 bytes to run.sh');
    expect(readFileSync(file, 'utf8')).toBe('echo new');
    expect(statSync(file).mode & 0o777).toBe(0o775);
    // A new inode shows the content arrived by rename, not by rewriting the old file in place.
    expect(statSync(file).ino).not.toBe(before);
    expect(readdirSync(s.ws)).toEqual(['run.sh']);
  });

  it('writes through a symlink that stays inside the workspace to its target', async () => {
    const s = sandbox();
    const real = s.put('real.txt', 'old');
    symlinkSync(real, path.join(s.ws, 'alias.txt'));
    expect(await run(tool, { path: 'alias.txt', content: 'new' }, s.ctx())).toBe('Wrote 3 bytes to alias.txt');
    expect(readFileSync(real, 'utf8')).toBe('new');
  });

  it('refuses content over the size cap and writes nothing', async () => {
    const s = sandbox();
    const small = createWriteFileTool({ maxWriteBytes: 10 });
    const err = await fails(small, { path: 'a.txt', content: 'x'.repeat(11) }, s.ctx());
    expect(err).toMatchObject({ code: 'SWB_E_FILE_TOO_LARGE' });
    expect(err.message).toContain('11 bytes, over the 10 bytes write limit');
    expect(existsSync(path.join(s.ws, 'a.txt'))).toBe(false);
    expect(await run(small, { path: 'a.txt', content: 'x'.repeat(10) }, s.ctx())).toBe('Wrote 10 bytes to a.txt');
  });

  it('refuses to replace a directory', async () => {
    const s = sandbox();
    s.put('dir/inner.txt', 'x');
    const err = await fails(tool, { path: 'dir', content: 'x' }, s.ctx());
    expect(err).toMatchObject({ code: 'SWB_E_FILE_KIND', message: expect.stringContaining('dir is a directory') });
  });

  it('reports a file in the middle of the path without host paths', async () => {
    const s = sandbox();
    s.put('plain', 'x');
    const err = await fails(tool, { path: 'plain/child.txt', content: 'x' }, s.ctx());
    expect(err.message).toBe('part of the path plain/child.txt is a file, not a directory');
  });

  it('refuses escapes: .., absolute paths, a symlinked file and a symlinked parent directory', async () => {
    const s = sandbox();
    symlinkSync(s.secretFile, path.join(s.ws, 'link.txt'));
    symlinkSync(s.outside, path.join(s.ws, 'outdir'));
    symlinkSync(path.join(s.outside, 'planted.txt'), path.join(s.ws, 'dangling.txt'));
    const cases = ['../escaped.txt', path.join(s.outside, 'abs.txt'), 'link.txt', 'outdir/new.txt', 'outdir/sub/new.txt', 'dangling.txt'];
    for (const p of cases) {
      const err = await fails(tool, { path: p, content: 'pwned' }, s.ctx());
      expect(err.code).toBe('SWB_E_PATH_ESCAPE');
      expect(err.message).toContain(PATH_ESCAPE_HINT);
      expect(leaksNothing(err.message, s)).toBe(true);
    }
    expect(readFileSync(s.secretFile, 'utf8')).toBe(`${SECRET}\n`);
    expect(readdirSync(s.outside).sort()).toEqual(['secret.txt']);
    expect(existsSync(path.join(path.dirname(s.ws), 'escaped.txt'))).toBe(false);
  });
});
