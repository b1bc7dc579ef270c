import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createReadFileTool, PATH_ESCAPE_HINT } from '../src/index.js';
import { fails, leaksNothing, run, sandbox } from './fixtures.js';

describe('read_file', () => {
  const tool = createReadFileTool();

  it('returns the raw text of a file', async () => {
    const s = sandbox();
    s.put('notes/todo.md', '# Todo\n- milk\r\n- eggs\n');
    expect(await run(tool, { path: 'notes/todo.md' }, s.ctx())).toBe('# Todo\n- milk\r\n- eggs\n');
    expect(await run(tool, { path: path.join(s.ws, 'notes/todo.md') }, s.ctx())).toBe('# Todo\n- milk\r\n- eggs\n');
  });

  it('returns a range of lines with offset and limit', async () => {
    const s = sandbox();
    s.put('f.txt', 'one\ntwo\nthree\nfour');
    const ctx = s.ctx();
    expect(await run(tool, { path: 'f.txt', offset: 2, limit: 2 }, ctx)).toBe('two\nthree\n');
    expect(await run(tool, { path: 'f.txt', offset: 3 }, ctx)).toBe('three\nfour');
    expect(await run(tool, { path: 'f.txt', limit: 1 }, ctx)).toBe('one\n');
    expect(await run(tool, { path: 'f.txt', offset: 4, limit: 10 }, ctx)).toBe('four');
    const err = await fails(tool, { path: 'f.txt', offset: 5 }, ctx);
    expect(err.message).toBe('offset 5 is past the end of f.txt, which has 4 lines');
    expect(() => tool.input.parse({ path: 'f.txt', offset: 0 })).toThrow();
  });

  it('says when a file is empty', async () => {
    const s = sandbox();
    s.put('empty.txt', '');
    expect(await run(tool, { path: 'empty.txt' }, s.ctx())).toBe('[empty.txt is empty]');
  });

  it('refuses directories, binary files and files over the byte cap', async () => {
    const s = sandbox();
    mkdirSync(path.join(s.ws, 'dir'));
    s.put('img.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]));
    s.put('big.txt', 'x'.repeat(2048));
    const small = createReadFileTool({ maxFileBytes: 1024 });
    expect(await fails(tool, { path: 'dir' }, s.ctx())).toMatchObject({ code: 'SWB_E_FILE_KIND', message: expect.stringContaining('dir is a directory') });
    expect(await fails(tool, { path: 'img.png' }, s.ctx())).toMatchObject({ code: 'SWB_E_FILE_BINARY', message: expect.stringContaining('binary') });
    expect(await fails(small, { path: 'big.txt' }, s.ctx())).toMatchObject({
      code: 'SWB_E_FILE_TOO_LARGE',
      message: 'big.txt is 2 KiB, over the 1 KiB limit of read_file; use search_files to find the lines you need',
    });
    expect(await run(small, { path: 'img.png' }, s.ctx()).catch((e: Error) => e.message)).toContain('binary');
  });

  it('only looks for NUL bytes in the first 8 KiB', async () => {
    const s = sandbox();
    s.put('late-nul.txt', Buffer.concat([Buffer.alloc(9000, 'a'), Buffer.from([0])]));
    expect((await run(tool, { path: 'late-nul.txt' }, s.ctx())).length).toBe(9001);
  });

  it('refuses paths outside the workspace without echoing them', async () => {
    const s = sandbox();
    symlinkSync(s.secretFile, path.join(s.ws, 'innocent.txt'));
    symlinkSync(s.outside, path.join(s.ws, 'docs'));
    for (const p of ['../outside/secret.txt', '/etc/passwd', s.secretFile, 'innocent.txt', 'docs/secret.txt']) {
      const err = await fails(tool, { path: p }, s.ctx());
      expect(err.code).toBe('SWB_E_PATH_ESCAPE');
      expect(err.message).toContain(PATH_ESCAPE_HINT);
      expect(leaksNothing(err.message, s)).toBe(true);
    }
  });

  it('names only the relative path when a file is missing', async () => {
    const s = sandbox();
    const err = await fails(tool, { path: 'nope/missing.md' }, s.ctx());
    expect(err).toMatchObject({ code: 'SWB_E_FILE_NOT_FOUND', message: 'nope/missing.md does not exist' });
  });
});
