import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createListFilesTool } from '../src/index.js';
import { fails, leaksNothing, run, sandbox } from './fixtures.js';

describe('list_files', () => {
  const tool = createListFilesTool();

  it('lists the workspace root sorted, directories with a trailing slash', async () => {
    const s = sandbox();
    s.put('b.txt', '');
    s.put('a.md', '');
    s.put('notes/todo.md', '');
    s.put('Z.txt', '');
    expect(await run(tool, {}, s.ctx())).toBe(['Z.txt', 'a.md', 'b.txt', 'notes/'].join('\n'));
  });

  it('lists a subdirectory with workspace-relative paths, recursively when asked', async () => {
    const s = sandbox();
    s.put('notes/todo.md', '');
    s.put('notes/2024/jan.md', '');
    s.put('notes/2024/feb.md', '');
    mkdirSync(path.join(s.ws, 'notes/empty'));
    s.put('other.txt', '');
    expect(await run(tool, { path: 'notes' }, s.ctx())).toBe('notes/2024/\nnotes/empty/\nnotes/todo.md');
    expect(await run(tool, { path: 'notes', recursive: true }, s.ctx())).toBe(
      ['notes/2024/', 'notes/2024/feb.md', 'notes/2024/jan.md', 'notes/empty/', 'notes/todo.md'].join('\n'),
    );
    expect(await run(tool, { path: 'notes/empty' }, s.ctx())).toBe('[notes/empty is empty]');
  });

  it('cuts the listing at the entry limit with a note', async () => {
    const s = sandbox();
    for (let i = 0; i < 30; i++) s.put(`d/f${String(i).padStart(2, '0')}.txt`, '');
    const small = createListFilesTool({ maxListEntries: 10 });
    const lines = (await run(small, { recursive: true }, s.ctx())).split('\n');
    expect(lines).toHaveLength(11);
    expect(lines.slice(0, 3)).toEqual(['d/', 'd/f00.txt', 'd/f01.txt']);
    expect(lines[10]).toBe('[listing cut at 10 entries; list a subdirectory to see more]');
    const exact = createListFilesTool({ maxListEntries: 31 });
    expect(await run(exact, { recursive: true }, s.ctx())).not.toContain('listing cut');
  });

  it('marks symlinks and never follows one out of the workspace', async () => {
    const s = sandbox();
    s.put('real/inner.txt', '');
    symlinkSync(path.join(s.ws, 'real'), path.join(s.ws, 'alias'));
    symlinkSync(s.outside, path.join(s.ws, 'escape'));
    symlinkSync(s.secretFile, path.join(s.ws, 'secret-link'));
    symlinkSync(path.join(s.ws, 'gone'), path.join(s.ws, 'broken'));
    const out = await run(tool, { recursive: true }, s.ctx());
    expect(out.split('\n')).toEqual([
      'alias/  [symlink]',
      'broken  [broken symlink]',
      'escape  [symlink to outside the workspace]',
      'real/',
      'real/inner.txt',
      'secret-link  [symlink to outside the workspace]',
    ]);
    expect(leaksNothing(out, s)).toBe(true);
    expect((await fails(tool, { path: 'escape' }, s.ctx())).code).toBe('SWB_E_PATH_ESCAPE');
  });

  it('refuses a file, a missing path and escapes', async () => {
    const s = sandbox();
    s.put('a.txt', '');
    expect(await fails(tool, { path: 'a.txt' }, s.ctx())).toMatchObject({ code: 'SWB_E_FILE_KIND', message: expect.stringContaining('use read_file') });
    expect(await fails(tool, { path: 'nope' }, s.ctx())).toMatchObject({ code: 'SWB_E_FILE_NOT_FOUND' });
    for (const p of ['..', '/etc', '../outside']) {
      const err = await fails(tool, { path: p }, s.ctx());
      expect(err.code).toBe('SWB_E_PATH_ESCAPE');
    }
  });
});
