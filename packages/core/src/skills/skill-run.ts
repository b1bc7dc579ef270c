import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { READ_RESULT_TOOL, type SkillScope, type SystemBlock, type ToolPermit, type ToolResult } from '@switchboard/agent';
import { matchToolName } from '../permissions/matchers.js';
import { TOOL_SEARCH } from '../tool-deferral/search.js';
import type { Skill } from './discover.js';

/** The tool that loads a skill. */
export const SKILL_TOOL = 'skill';

/**
 * Tools a skill's `allowed-tools` never takes away, because the run needs them to work at all:
 * `skill` (a second skill can only narrow further), `read_result` (pages a result the run already
 * has) and `tool_search` (loads a schema; it runs nothing).
 */
export const ALWAYS_PERMITTED: readonly string[] = Object.freeze([SKILL_TOOL, READ_RESULT_TOOL, TOOL_SEARCH]);

/** Files of a skill's folder listed when it loads, at most (deeper or further ones are not listed, still readable). */
const MAX_LISTED_FILES = 50;
const MAX_LIST_DEPTH = 3;

/** One skill's `allowed-tools` in force. */
interface Narrowing {
  skill: string;
  patterns: readonly string[];
}

/** What a {@link SkillRun} works with. */
export interface SkillRunOptions {
  /** The members of a `group:*` shorthand in `allowed-tools` (the registry's groups); absent: groups match nothing. */
  groupMembers?: (group: string) => readonly string[];
}

/** One line: whitespace (newlines included) collapsed. */
const oneLine = (text: string) => text.replace(/\s+/gu, ' ').trim();

/** The operator's text inside the skill fence, unable to close it early. */
const defuse = (text: string) => text.replace(/<\/skill/giu, '<\\/skill');

/**
 * The skills of one run (a turn, or a subagent's whole run): which skills it may load, and what
 * loading them did. Create one per run: loading a skill narrows this run's tools to the skill's
 * `allowed-tools` (a second skill intersects) and lets `read_file` read the skill's folder, until
 * the run ends — a new turn starts with a new run, so nothing carries over. A subagent gets its
 * own with {@link fork}, which keeps what the parent's run has narrowed so far.
 */
export class SkillRun implements SkillScope {
  private readonly narrowings: Narrowing[];
  private readonly roots: string[];
  private readonly loaded = new Set<string>();

  constructor(
    private readonly skills: readonly Skill[],
    private readonly options: SkillRunOptions = {},
    inherited: { narrowings: readonly Narrowing[]; roots: readonly string[] } = { narrowings: [], roots: [] },
  ) {
    this.narrowings = [...inherited.narrowings];
    this.roots = [...inherited.roots];
  }

  /** The skills this run may load, by name. */
  available(): readonly Skill[] {
    return [...this.skills].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The skills loaded so far (in load order; a fork's parent's loads are not counted). */
  loadedNames(): string[] {
    return [...this.loaded];
  }

  /**
   * The system block that lists the available skills by name and description only (no block
   * without skills). It depends only on which skills are enabled, so it stays byte-identical
   * from turn to turn and belongs to the cached prefix.
   */
  listing(): SystemBlock[] {
    const skills = this.available();
    if (skills.length === 0) return [];
    const head =
      `Skills. The gateway's operator installed these skills: instructions for particular tasks, loaded on demand. ` +
      `When a task matches a skill's description, call the ${SKILL_TOOL} tool with its name before you start, and follow what it returns.`;
    return [{ type: 'text', text: `${head}\n${skills.map((s) => `- ${s.name}: ${oneLine(s.description)}`).join('\n')}` }];
  }

  async load(name: string): Promise<ToolResult> {
    const skill = this.skills.find((s) => s.name === name);
    if (!skill) {
      const names = this.available().map((s) => s.name);
      return { isError: true, content: `No skill named "${name}" is available here. Available skills: ${names.length > 0 ? names.join(', ') : 'none'}.` };
    }
    if (!this.loaded.has(name)) {
      this.loaded.add(name);
      if (!this.roots.includes(skill.dir)) this.roots.push(skill.dir);
      if (skill.allowedTools) this.narrowings.push({ skill: name, patterns: skill.allowedTools });
    }
    return { content: await this.render(skill) };
  }

  permits(toolName: string): ToolPermit {
    if (ALWAYS_PERMITTED.includes(toolName)) return { ok: true };
    for (const n of this.narrowings) {
      if (n.patterns.some((p) => this.matches(p, toolName))) continue;
      const allowed = n.patterns.length > 0 ? n.patterns.join(', ') : 'no tools';
      return {
        ok: false,
        reason:
          `${toolName} is not allowed while the skill "${n.skill}" is in use: its allowed-tools are ${allowed} ` +
          `(plus ${ALWAYS_PERMITTED.join(', ')}). This lasts until the end of this turn; carry on with those tools, or answer and let the person decide.`,
      };
    }
    return { ok: true };
  }

  readRoots(): readonly string[] {
    return [...this.roots];
  }

  /**
   * A run for a subagent of this run: it may load `skills` (default: the same ones), and starts
   * with everything this run has narrowed and opened so far, so it can never use more than its parent.
   */
  fork(skills: readonly Skill[] = this.skills): SkillRun {
    return new SkillRun(skills, this.options, { narrowings: this.narrowings, roots: this.roots });
  }

  private matches(pattern: string, toolName: string): boolean {
    if (pattern.startsWith('group:')) return (this.options.groupMembers?.(pattern) ?? []).includes(toolName);
    return matchToolName(pattern, toolName);
  }

  private async render(skill: Skill): Promise<string> {
    const files = await listFiles(skill.dir);
    const lines = [
      `<skill name="${skill.name}">`,
      `The gateway's operator provided these instructions (skill "${skill.name}"). They carry the operator's authority for this task only.`,
      `Folder: ${skill.dir} — read its files with read_file and an absolute path inside it (read-only, for the rest of this turn).`,
      files.length > 0 ? `Files: ${files.join(', ')}` : 'Files: none besides the instructions.',
    ];
    if (skill.allowedTools) {
      const list = skill.allowedTools.length > 0 ? skill.allowedTools.join(', ') : 'none';
      lines.push(`Allowed tools while this skill is in use (until the end of this turn): ${list} (plus ${ALWAYS_PERMITTED.join(', ')}).`);
    }
    lines.push('', defuse(skill.body.trimEnd()), '</skill>');
    return lines.join('\n');
  }
}

/** The files of a skill's folder (relative, `/`-separated, by name), without `SKILL.md`, not following symbolic links; bounded. */
async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string, depth: number): Promise<void> => {
    const names = (await readdir(path.join(dir, rel)).catch(() => [] as string[])).sort();
    for (const name of names) {
      if (out.length >= MAX_LISTED_FILES) return;
      const child = rel === '' ? name : `${rel}/${name}`;
      const info = await lstat(path.join(dir, child)).catch(() => null);
      if (info?.isDirectory() && depth < MAX_LIST_DEPTH) await walk(child, depth + 1);
      else if (info?.isFile() && child !== 'SKILL.md') out.push(child);
    }
  };
  await walk('', 1);
  return out;
}
