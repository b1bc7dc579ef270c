import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SkillScope, ToolContext } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { createFileTools } from '../src/index.js';
import { SECRET, sandbox } from './fixtures.js';

// After a skill loads, read_file (only it) may read that skill's folder by absolute path; nothing
// else outside the workspace opens, and writers never do.

function withSkill(ctx: ToolContext, roots: string[]): ToolContext {
  const skills: SkillScope = { load: async () => ({ content: '' }), permits: () => ({ ok: true }), readRoots: () => roots };
  return { ...ctx, skills };
}

const tools = createFileTools();
const tool = (name: string) => tools.find((t) => t.name === name)!;

async function attempt(name: string, input: unknown, ctx: ToolContext): Promise<{ ok: boolean; text: string }> {
  const t = tool(name);
  const parsed = t.input.parse(input);
  const valid = (await t.validateInput?.(parsed, ctx)) ?? { ok: true as const };
  if (!valid.ok) return { ok: false, text: valid.message };
  try {
    const res = await t.call(parsed, ctx);
    return { ok: res.isError !== true, text: res.content };
  } catch (err) {
    return { ok: false, text: err instanceof Error ? err.message : String(err) };
  }
}

describe('read_file in a loaded skill folder', () => {
  const s = sandbox();
  const skillDir = path.join(s.outside, 'skills', 'deploy');
  mkdirSync(path.join(skillDir, 'ref'), { recursive: true });
  writeFileSync(path.join(skillDir, 'ref', 'steps.md'), 'STEPS\n');
  symlinkSync(s.secretFile, path.join(skillDir, 'leak.md'));
  const other = path.join(s.outside, 'skills', 'other');
  mkdirSync(other);
  writeFileSync(path.join(other, 'SKILL.md'), 'OTHER\n');
  const ctx = withSkill(s.ctx(), [skillDir]);

  it('reads a file inside the loaded folder by absolute path', async () => {
    expect(await attempt('read_file', { path: path.join(skillDir, 'ref', 'steps.md') }, ctx)).toEqual({ ok: true, text: 'STEPS\n' });
  });

  it('refuses a symlink leading out, `..` out of the folder, another folder, and everything without a loaded skill', async () => {
    for (const p of [path.join(skillDir, 'leak.md'), `${skillDir}/../other/SKILL.md`, path.join(other, 'SKILL.md'), s.secretFile, `${skillDir}/\0x`]) {
      const res = await attempt('read_file', { path: p }, ctx);
      expect(res.ok, p).toBe(false);
      expect(res.text).not.toContain(SECRET);
      expect(res.text).not.toContain('OTHER');
    }
    expect((await attempt('read_file', { path: path.join(skillDir, 'ref', 'steps.md') }, s.ctx())).ok).toBe(false);
  });

  it('writers never accept the folder', async () => {
    for (const [name, input] of [
      ['write_file', { path: path.join(skillDir, 'planted.md'), content: 'x' }],
      ['edit_file', { path: path.join(skillDir, 'ref', 'steps.md'), old_string: 'STEPS', new_string: 'HACKED' }],
      ['list_files', { path: skillDir }],
      ['search_files', { pattern: 'STEPS', path: skillDir }],
    ] as const) {
      expect((await attempt(name, input, ctx)).ok, name).toBe(false);
    }
  });
});
