import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEditFileTool } from '../src/index.js';
import { fails, leaksNothing, run, sandbox, SECRET } from './fixtures.js';

describe('edit_file', () => {
  const tool = createEditFileTool();

  it('replaces a unique occurrence and writes atomically', async () => {
    const s = sandbox();
    const file = s.put('notes/todo.md', '- milk\n- eggs\n');
    const out = await run(tool, { path: 'notes/todo.md', old_string: '- eggs', new_string: '- eggs\n- bread' }, s.ctx());
    expect(out).toBe('Replaced 1 occurrence in notes/todo.md');
    expect(readFileSync(file, 'utf8')).toBe('- milk\n- eggs\n- bread\n');
    expect(readdirSync(path.dirname(file))).toEqual(['todo.md']);
  });

  it('inserts new_string literally, without $-pattern expansion', async () => {
    const s = sandbox();
    const file = s.put('a.txt', 'price: X');
    await run(tool, { path: 'a.txt', old_string: 'X', new_string: "$& $' $1 $$" }, s.ctx());
    expect(readFileSync(file, 'utf8')).toBe("price: $& $' $1 $$");
  });

  it('fails clearly when old_string is missing', async () => {
    const s = sandbox();
    const file = s.put('a.txt', 'hello');
    const err = await fails(tool, { path: 'a.txt', old_string: 'bye', new_string: 'x' }, s.ctx());
    expect(err).toMatchObject({ code: 'SWB_E_EDIT_NO_MATCH', message: 'old_string was not found in a.txt' });
    expect(readFileSync(file, 'utf8')).toBe('hello');
  });

  it('refuses a non-unique old_string unless replaceAll is set', async () => {
    const s = sandbox();
    const file = s.put('a.txt', 'x = 1; x = 1; x = 1;');
    const err = await fails(tool, { path: 'a.txt', old_string: 'x = 1', new_string: 'y = 2' }, s.ctx());
    expect(err).toMatchObject({
      code: 'SWB_E_EDIT_AMBIGUOUS',
      message: 'old_string occurs 3 times in a.txt; add context to make it unique or set replaceAll',
    });
    expect(readFileSync(file, 'utf8')).toBe('x = 1; x = 1; x = 1;');
    const out = await run(tool, { path: 'a.txt', old_string: 'x = 1', new_string: 'y = 2', replaceAll: true }, s.ctx());
    expect(out).toBe('Replaced 3 occurrences in a.txt');
    expect(readFileSync(file, 'utf8')).toBe('y = 2; y = 2; y = 2;');
  });

  it('refuses identical old and new strings, and an empty old_string', async () => {
    const s = sandbox();
    s.put('a.txt', 'same');
    const err = await fails(tool, { path: 'a.txt', old_string: 'same', new_string: 'same' }, s.ctx());
    expect(err).toMatchObject({ code: 'SWB_E_TOOL_INPUT', message: expect.stringContaining('identical') });
    expect(tool.input.safeParse({ path: 'a.txt', old_string: '', new_string: 'x' }).success).toBe(false);
  });

  it('refuses missing, binary and oversized files, and edits that would grow past the write cap', async () => {
    const s = sandbox();
    s.put('bin', Buffer.from([1, 0, 2]));
    s.put('big.txt', 'a'.repeat(100));
    const small = createEditFileTool({ maxFileBytes: 50, maxWriteBytes: 60 });
    expect(await fails(tool, { path: 'missing.txt', old_string: 'a', new_string: 'b' }, s.ctx())).toMatchObject({
      code: 'SWB_E_FILE_NOT_FOUND',
      message: 'missing.txt does not exist',
    });
    expect(await fails(tool, { path: 'bin', old_string: 'a', new_string: 'b' }, s.ctx())).toMatchObject({ code: 'SWB_E_FILE_BINARY' });
    expect(await fails(small, { path: 'big.txt', old_string: 'a', new_string: 'b', replaceAll: true }, s.ctx())).toMatchObject({
      code: 'SWB_E_FILE_TOO_LARGE',
      message: expect.stringContaining('limit of edit_file'),
    });
    const grow = s.put('grow.txt', 'x'.repeat(40));
    expect(await fails(small, { path: 'grow.txt', old_string: 'x', new_string: 'xx', replaceAll: true }, s.ctx())).toMatchObject({
      code: 'SWB_E_FILE_TOO_LARGE',
    });
    expect(readFileSync(grow, 'utf8')).toBe('x'.repeat(40));
  });

  it('refuses to edit through a symlink that leads outside', async () => {
    const s = sandbox();
    symlinkSync(s.secretFile, path.join(s.ws, 'link.txt'));
    for (const p of ['link.txt', '../outside/secret.txt', s.secretFile]) {
      const err = await fails(tool, { path: p, old_string: SECRET, new_string: 'pwned' }, s.ctx());
      expect(err.code).toBe('SWB_E_PATH_ESCAPE');
      expect(leaksNothing(err.message, s)).toBe(true);
    }
    expect(readFileSync(s.secretFile, 'utf8')).toBe(`${SECRET}\n`);
  });
});
