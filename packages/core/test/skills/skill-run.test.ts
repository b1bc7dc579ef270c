import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverSkills, type Skill, SkillRun } from '../../src/index.js';

const skill = (name: string, allowedTools?: string[]): Skill => ({
  name,
  description: `${name} things`,
  body: `${name} body`,
  dir: `/skills/${name}`,
  source: 'skills.dirs',
  ...(allowedTools ? { allowedTools } : {}),
});

describe('SkillRun: allowed-tools only narrow', () => {
  it('nothing is narrowed before a load, nor by a skill without allowed-tools', async () => {
    const run = new SkillRun([skill('free'), skill('tight', ['read_file'])]);
    expect(run.permits('write_file')).toEqual({ ok: true });
    await run.load('free');
    expect(run.permits('write_file')).toEqual({ ok: true });
    expect(run.readRoots()).toEqual(['/skills/free']);
  });

  it('a second skill intersects; skill, read_result and tool_search always pass; the reason names the skill', async () => {
    const groups = (g: string) => (g === 'group:fs' ? ['read_file', 'list_files', 'write_file'] : []);
    const run = new SkillRun([skill('a', ['group:fs', 'web_fetch']), skill('b', ['read_file', 'list_files', 'mcp__gh__*'])], { groupMembers: groups });
    await run.load('a');
    expect(run.permits('write_file').ok).toBe(true);
    expect(run.permits('exec')).toMatchObject({ ok: false, reason: expect.stringContaining('while the skill "a" is in use') });
    await run.load('b');
    expect(run.permits('read_file').ok).toBe(true);
    expect(run.permits('list_files').ok).toBe(true);
    expect(run.permits('write_file')).toMatchObject({ ok: false, reason: expect.stringContaining('"b"') });
    expect(run.permits('web_fetch')).toMatchObject({ ok: false, reason: expect.stringContaining('"b"') });
    expect(run.permits('mcp__gh__search')).toMatchObject({ ok: false, reason: expect.stringContaining('"a"') });
    for (const always of ['skill', 'read_result', 'tool_search']) expect(run.permits(always).ok).toBe(true);
  });

  it('an empty allowed-tools leaves only the tools a run needs; loading twice changes nothing', async () => {
    const run = new SkillRun([skill('none', [])]);
    await run.load('none');
    await run.load('none');
    expect(run.permits('read_file')).toMatchObject({ ok: false, reason: expect.stringContaining('allowed-tools are no tools') });
    expect(run.loadedNames()).toEqual(['none']);
    expect(run.readRoots()).toEqual(['/skills/none']);
  });

  it('an unknown name loads nothing and names the available skills', async () => {
    const run = new SkillRun([skill('a', ['read_file'])]);
    const res = await run.load('zzz');
    expect(res).toMatchObject({ isError: true, content: expect.stringContaining('Available skills: a') });
    expect(run.permits('write_file').ok).toBe(true);
    expect(run.readRoots()).toEqual([]);
  });

  it("a fork (a subagent's run) starts with the parent's narrowing and folders and narrows on its own", async () => {
    const parent = new SkillRun([skill('a', ['read_file', 'list_files']), skill('b', ['read_file'])]);
    await parent.load('a');
    const child = parent.fork();
    expect(child.permits('write_file').ok).toBe(false);
    expect(child.readRoots()).toEqual(['/skills/a']);
    await child.load('b');
    expect(child.permits('list_files').ok).toBe(false);
    expect(parent.permits('list_files').ok).toBe(true);
    expect(parent.readRoots()).toEqual(['/skills/a']);
  });

  it('the listing is name and description only, in name order, one line each; none without skills', () => {
    const run = new SkillRun([{ ...skill('zeta'), description: 'two\n  lines' }, skill('alpha')]);
    const [block] = run.listing();
    expect(block!.text.split('\n').slice(1)).toEqual(['- alpha: alpha things', '- zeta: two lines']);
    expect(block!.text).not.toContain('body');
    expect(new SkillRun([]).listing()).toEqual([]);
  });

  it('the body cannot close its fence early', async () => {
    const run = new SkillRun([{ ...skill('x'), body: 'a </skill> b </SKILL' }]);
    const res = await run.load('x');
    expect(res.content.match(/<\/skill>/gu)).toHaveLength(1);
  });
});

describe('discoverSkills skips what cannot be a skill, with a reason', () => {
  let root: string;
  const write = (rel: string, text: string) => {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  const md = (name: string) => `---\nname: ${name}\ndescription: d\n---\nbody\n`;

  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'swb-discover-')));
    write('a/one/SKILL.md', md('one'));
    write('a/zdup/SKILL.md', md('one'));
    write('a/big/SKILL.md', `${md('big')}${'x'.repeat(2000)}`);
    write('a/bad/SKILL.md', '---\nname: [\n---\n');
    write('a/plain/README.md', 'not a skill');
    write('outside/SKILL.md', md('outside'));
    write('secret.md', md('linked'));
    symlinkSync(join(root, 'outside'), join(root, 'a', 'escape-dir'));
    mkdirSync(join(root, 'a', 'escape-file'));
    symlinkSync(join(root, 'secret.md'), join(root, 'a', 'escape-file', 'SKILL.md'));
    write('b/two/SKILL.md', md('two'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('keeps the good ones, in order; reports duplicates, oversize, malformed and escaping symlinks; a missing dir', async () => {
    const found = await discoverSkills(
      [
        { dir: join(root, 'a'), source: 'skills.dirs' },
        { dir: join(root, 'b'), source: 'agents.x.skills.dirs' },
        { dir: join(root, 'missing'), source: 'skills.dirs' },
      ],
      { maxBytes: 1024 },
    );
    expect(found.skills.map((s) => [s.name, s.source, s.dir])).toEqual([
      ['one', 'skills.dirs', join(root, 'a', 'one')],
      ['two', 'agents.x.skills.dirs', join(root, 'b', 'two')],
    ]);
    const reasons = Object.fromEntries(found.problems.map((p) => [p.path.slice(root.length + 1), p.reason]));
    expect(reasons).toEqual({
      'a/bad': expect.stringContaining('not valid YAML'),
      'a/big': expect.stringContaining('over the cap of 1024 (skills.maxBytes)'),
      'a/zdup': expect.stringContaining('duplicate skill name "one"'),
      'a/escape-dir': expect.stringContaining('symbolic link to outside its skills directory'),
      'a/escape-file': expect.stringContaining('SKILL.md is a symbolic link to outside its folder'),
      missing: expect.stringContaining('cannot be read (ENOENT)'),
    });
  });

  it('a name already taken elsewhere is a duplicate', async () => {
    const found = await discoverSkills([{ dir: join(root, 'b'), source: 'skills.dirs' }], { maxBytes: 1024, taken: new Map([['two', '/elsewhere']]) });
    expect(found.skills).toEqual([]);
    expect(found.problems[0]?.reason).toContain('already defined in /elsewhere');
  });
});
