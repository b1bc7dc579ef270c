import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SkillCatalog } from '../../src/index.js';

describe('SkillCatalog', () => {
  let root: string;
  const skill = (dir: string, name: string) => {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, 'SKILL.md'), `---\nname: ${name}\ndescription: ${name} d\n---\n${name} body\n`);
  };

  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'swb-catalog-')));
    skill('gw/shared', 'shared');
    skill('ops/deploy', 'deploy');
    skill('ops/again', 'shared');
    skill('ws/skills/mine', 'mine');
    skill('ws/skills/fake-shared', 'shared');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const load = () =>
    SkillCatalog.load({
      dirs: [join(root, 'gw')],
      maxBytes: 4096,
      agents: new Map([
        ['ops', { dirs: [join(root, 'ops')], workspace: false }],
        ['open', { dirs: [], workspace: true }],
        ['plain', { dirs: [], workspace: false }],
      ]),
    });

  it("gives each agent the gateway's skills and its own; a name is unique gateway-wide", async () => {
    const catalog = await load();
    expect((await catalog.forTurn('ops', join(root, 'ws'))).map((s) => s.name)).toEqual(['shared', 'deploy']);
    expect((await catalog.forTurn('plain', join(root, 'ws'))).map((s) => s.name)).toEqual(['shared']);
    expect(catalog.all().map(({ skill, agents }) => [skill.name, agents])).toEqual([
      ['shared', '*'],
      ['deploy', ['ops']],
    ]);
    expect(catalog.problems.map((p) => [p.source, p.reason])).toEqual([['agents.ops.skills.dirs', expect.stringContaining('duplicate skill name "shared"')]]);
  });

  it('reads workspace skills per turn only where the agent turned them on, never shadowing a configured one', async () => {
    const catalog = await load();
    expect((await catalog.forTurn('open', join(root, 'ws'))).map((s) => [s.name, s.source])).toEqual([
      ['shared', 'skills.dirs'],
      ['mine', 'agents.open.skills.workspace'],
    ]);
    expect((await catalog.forTurn('open', join(root, 'nowhere'))).map((s) => s.name)).toEqual(['shared']);
    expect((await catalog.forTurn('open', undefined)).map((s) => s.name)).toEqual(['shared']);
    expect(catalog.offersSkills('open')).toBe(true);
    expect(catalog.offersSkills('plain')).toBe(true);
  });
});
