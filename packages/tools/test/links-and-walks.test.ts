import { linkSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEditFileTool, createListFilesTool, createReadFileTool, createSearchFilesTool, createWriteFileTool } from '../src/index.js';
import { fails, run, sandbox } from './fixtures.js';

describe('files with more than one hard link', () => {
  it('can be read, but write_file and edit_file refuse them, in validation and in the call', async () => {
    const s = sandbox();
    const original = s.put('original.txt', 'original');
    linkSync(original, path.join(s.ws, 'twin.txt'));
    expect(await run(createReadFileTool(), { path: 'twin.txt' }, s.ctx())).toContain('original');
    const write = createWriteFileTool();
    const edit = createEditFileTool();
    const w = await fails(write, { path: 'twin.txt', content: 'x' }, s.ctx());
    expect(w.code).toBe('SWB_E_HARD_LINK');
    expect(w.message).toMatch(/twin\.txt has 2 hard links/);
    expect((await fails(edit, { path: 'twin.txt', old_string: 'original', new_string: 'y' }, s.ctx())).code).toBe('SWB_E_HARD_LINK');
    expect(await write.validateInput!({ path: 'twin.txt', content: 'x' }, s.ctx())).toMatchObject({ ok: false, message: expect.stringMatching(/hard links/) });
    expect(await edit.validateInput!({ path: 'original.txt', old_string: 'o', new_string: 'p', replaceAll: false }, s.ctx())).toMatchObject({ ok: false });
    expect(await write.validateInput!({ path: 'fresh.txt', content: 'x' }, s.ctx())).toEqual({ ok: true });
    expect(readFileSync(original, 'utf8')).toBe('original');
  });
});

describe('walks with a path filter', () => {
  const filtered = (deny: (rel: string) => boolean) => {
    const s = sandbox();
    s.put('hr/salaries.txt', 'salary 123456\n');
    s.put('hr/public/ok.txt', 'salary band info\n');
    s.put('team.txt', 'salary talk\n');
    const seen: string[] = [];
    const ctx = {
      ...s.ctx(),
      pathFilter: async (tool: string, e: { relative: string; absolute: string }) => {
        seen.push(`${tool}:${e.relative}`);
        expect(e.absolute).toBe(path.join(s.ws, e.relative));
        return !deny(e.relative);
      },
    };
    return { s, ctx, seen };
  };

  it('search_files omits withheld files and says how many, without naming them', async () => {
    const { ctx, seen } = filtered((rel) => rel === 'hr' || rel === 'hr/salaries.txt');
    const out = await run(createSearchFilesTool(), { pattern: 'salary' }, ctx);
    expect(out).toContain('team.txt:1: salary talk');
    expect(out).toContain('hr/public/ok.txt:1: salary band info');
    expect(out).not.toContain('123456');
    expect(out).not.toContain('salaries');
    expect(out).toContain('[2 entries withheld by the permission rules]');
    expect(seen).toContain('search_files:hr/salaries.txt');
  });

  it('list_files omits withheld entries, descends below a withheld directory, and notes them', async () => {
    const { ctx } = filtered((rel) => rel.startsWith('hr/s') || rel === 'hr');
    const out = await run(createListFilesTool(), { recursive: true }, ctx);
    expect(out.split('\n')).toEqual(['hr/public/', 'hr/public/ok.txt', 'team.txt', '[2 entries withheld by the permission rules]']);
  });

  it('a listing where everything is withheld says so rather than "empty"', async () => {
    const { ctx } = filtered(() => true);
    expect(await run(createListFilesTool(), {}, ctx)).toBe('[nothing to show in .] [2 entries withheld by the permission rules]');
  });

  it('a filter that throws withholds', async () => {
    const s = sandbox();
    s.put('a.txt', 'x');
    const out = await run(createListFilesTool(), {}, { ...s.ctx(), pathFilter: async () => Promise.reject(new Error('boom')) });
    expect(out).toContain('[1 entry withheld by the permission rules]');
  });
});
