import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSearchFilesTool } from '../src/index.js';
import { fails, leaksNothing, run, sandbox, SECRET } from './fixtures.js';

describe('search_files', () => {
  const tool = createSearchFilesTool();

  it('returns path:line: text for each matching line, in path order', async () => {
    const s = sandbox();
    s.put('src/b.ts', 'const a = 1;\n// TODO: later\r\n');
    s.put('src/a.ts', '// TODO first\nok\n// todo lower\n');
    s.put('notes.md', 'nothing here\n');
    expect(await run(tool, { pattern: 'TODO' }, s.ctx())).toBe('src/a.ts:1: // TODO first\nsrc/b.ts:2: // TODO: later');
    expect(await run(tool, { pattern: 'todo', caseInsensitive: true, path: 'src' }, s.ctx())).toBe(
      'src/a.ts:1: // TODO first\nsrc/a.ts:3: // todo lower\nsrc/b.ts:2: // TODO: later',
    );
    expect(await run(tool, { pattern: '^ok$', path: 'src/a.ts' }, s.ctx())).toBe('src/a.ts:2: ok');
  });

  it('filters by a file-name glob', async () => {
    const s = sandbox();
    s.put('a.ts', 'hit');
    s.put('b.md', 'hit');
    s.put('c.txt', 'hit');
    s.put('sub/d.ts', 'hit');
    expect(await run(tool, { pattern: 'hit', glob: '*.ts' }, s.ctx())).toBe('a.ts:1: hit\nsub/d.ts:1: hit');
    expect(await run(tool, { pattern: 'hit', glob: '*.{md,txt}' }, s.ctx())).toBe('b.md:1: hit\nc.txt:1: hit');
    expect(await run(tool, { pattern: 'hit', glob: '?.md' }, s.ctx())).toBe('b.md:1: hit');
    expect(await fails(tool, { pattern: 'hit', glob: 'sub/*.ts' }, s.ctx())).toMatchObject({ code: 'SWB_E_TOOL_INPUT' });
  });

  it('says so when nothing matches', async () => {
    const s = sandbox();
    s.put('a.txt', 'abc');
    expect(await run(tool, { pattern: 'xyz' }, s.ctx())).toBe('No matches for /xyz/ in .');
  });

  it('bounds the matches and the line length, with a note', async () => {
    const s = sandbox();
    s.put('many.txt', Array.from({ length: 50 }, (_, i) => `match ${i}`).join('\n'));
    s.put('long.txt', `match ${'y'.repeat(1000)}`);
    const small = createSearchFilesTool({ maxSearchMatches: 5, maxLineChars: 20 });
    const lines = (await run(small, { pattern: 'match', path: 'many.txt' }, s.ctx())).split('\n');
    expect(lines).toEqual([
      'many.txt:1: match 0',
      'many.txt:2: match 1',
      'many.txt:3: match 2',
      'many.txt:4: match 3',
      'many.txt:5: match 4',
      '[stopped after 5 matches; narrow the pattern, path or glob to see the rest]',
    ]);
    expect(await run(small, { pattern: 'match', path: 'long.txt' }, s.ctx())).toBe(`long.txt:1: match ${'y'.repeat(14)}…`);
    expect(await run(tool, { pattern: 'match', path: 'long.txt' }, s.ctx())).toBe(`long.txt:1: match ${'y'.repeat(294)}…`);
    const exactly = createSearchFilesTool({ maxSearchMatches: 50 });
    expect(await run(exactly, { pattern: 'match', path: 'many.txt' }, s.ctx())).not.toContain('stopped after');
  });

  it('refuses an invalid regular expression clearly', async () => {
    const s = sandbox();
    const err = await fails(tool, { pattern: '(unclosed' }, s.ctx());
    expect(err).toMatchObject({ code: 'SWB_E_TOOL_INPUT', message: expect.stringContaining('pattern: not a valid regular expression') });
  });

  it('runs catastrophic-backtracking patterns and globs in linear time, and names unsupported syntax', async () => {
    const s = sandbox();
    s.put('redos.txt', `${'a'.repeat(60)}!\nthe quick brown fox\n`);
    s.put(`${'a'.repeat(200)}.txt`, 'hit\n');
    expect(await run(tool, { pattern: '(a+)+$', path: 'redos.txt' }, s.ctx())).toBe('No matches for /(a+)+$/ in redos.txt');
    expect(await run(tool, { pattern: '^(\\w+\\s?)*$', path: 'redos.txt' }, s.ctx())).toContain('redos.txt:2: the quick brown fox');
    // A many-star glob against a long name backtracks for minutes in a JavaScript RegExp.
    expect(await run(tool, { pattern: 'hit', glob: `${'*a'.repeat(14)}*b` }, s.ctx())).toBe('No matches for /hit/ in .');
    expect(await fails(tool, { pattern: '(a)\\1' }, s.ctx())).toMatchObject({ code: 'SWB_E_TOOL_INPUT', message: expect.stringContaining('backreferences') });
    expect(await fails(tool, { pattern: 'a(?<=b)' }, s.ctx())).toMatchObject({ message: expect.stringContaining('lookbehind') });
    const short = createSearchFilesTool({ regexMaxLength: 20 });
    expect(await fails(short, { pattern: 'x'.repeat(21) }, s.ctx())).toMatchObject({ message: expect.stringContaining('limits.regexMaxLength') });
    expect(await fails(short, { pattern: 'x', glob: '*'.repeat(21) }, s.ctx())).toMatchObject({ message: expect.stringContaining('limits.regexMaxLength') });
  });

  it('skips binary and oversized files and says how many', async () => {
    const s = sandbox();
    s.put('a.bin', Buffer.concat([Buffer.from('needle\n'), Buffer.from([0])]));
    s.put('big.txt', `needle\n${'x'.repeat(200)}`);
    s.put('ok.txt', 'needle');
    const small = createSearchFilesTool({ maxFileBytes: 100 });
    expect(await run(small, { pattern: 'needle' }, s.ctx())).toBe('ok.txt:1: needle\n[skipped 1 binary file, 1 file over 100 bytes]');
  });

  it('does not follow symlinks out of the workspace and refuses escaping paths', async () => {
    const s = sandbox();
    symlinkSync(s.outside, path.join(s.ws, 'outdir'));
    symlinkSync(s.secretFile, path.join(s.ws, 'secret-link.txt'));
    s.put('mine.txt', 'nothing');
    const out = await run(tool, { pattern: SECRET }, s.ctx());
    expect(out).toBe(`No matches for /${SECRET}/ in .`);
    for (const p of ['outdir', 'secret-link.txt', '../outside', s.outside]) {
      const err = await fails(tool, { pattern: SECRET, path: p }, s.ctx());
      expect(err.code).toBe('SWB_E_PATH_ESCAPE');
      expect(leaksNothing(err.message, s)).toBe(true);
    }
  });

  it('stops when the signal is already aborted', async () => {
    const s = sandbox();
    s.put('a.txt', 'hit');
    const ac = new AbortController();
    ac.abort();
    expect(await fails(tool, { pattern: 'hit' }, s.ctx(ac.signal))).toMatchObject({ code: 'SWB_E_ABORTED' });
  });

  it('checks the signal between files and stops mid-search', async () => {
    const s = sandbox();
    for (let i = 0; i < 20; i++) s.put(`f${String(i).padStart(2, '0')}.txt`, 'hit');
    let checks = 0;
    // Reads as aborted from the fifth check on, i.e. after a few files were searched.
    const signal = {
      get aborted() {
        return ++checks > 4;
      },
    } as AbortSignal;
    expect(await fails(tool, { pattern: 'hit' }, s.ctx(signal))).toMatchObject({ code: 'SWB_E_ABORTED' });
    expect(checks).toBeLessThan(10);
  });

  it('stops when aborted while the search is running', async () => {
    const s = sandbox();
    for (let i = 0; i < 300; i++) s.put(`d${i % 10}/f${i}.txt`, 'hit\n'.repeat(3));
    const ac = new AbortController();
    let reads = 0;
    const signal = new Proxy(ac.signal, {
      get(target, key) {
        if (key === 'aborted') reads++;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    let settled = false;
    const pending = run(createSearchFilesTool({ maxSearchMatches: 10_000 }), { pattern: 'hit' }, s.ctx(signal));
    pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    // Abort only once the walk has checked the signal a few times, i.e. is under way.
    while (reads < 3 && !settled) await new Promise((r) => setImmediate(r));
    ac.abort();
    await expect(pending).rejects.toMatchObject({ code: 'SWB_E_ABORTED' });
  });
});
