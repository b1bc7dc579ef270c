import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseSkillFile, type SkillMeta } from './front-matter.js';

/** The file that makes a folder a skill. */
export const SKILL_FILE = 'SKILL.md';
/** The default cap of a `SKILL.md` in bytes (`skills.maxBytes`). */
export const DEFAULT_SKILL_MAX_BYTES = 64 * 1024;

/** One discovered skill: operator-controlled data read at start-up. */
export interface Skill extends SkillMeta {
  /** The instructions after the front matter. */
  body: string;
  /** The real path of the skill's folder (its own files are readable from here, read-only). */
  dir: string;
  /** Where it was configured: `skills.dirs`, `agents.<id>.skills.dirs` or `agents.<id>.skills.workspace`. */
  source: string;
}

/** A skill folder that was skipped, and why (a log line and a `doctor` line). */
export interface SkillProblem {
  /** The folder (or skills directory) as configured. */
  path: string;
  /** The config key it came from. */
  source: string;
  reason: string;
}

/** One directory of skill folders and the config key that names it. */
export interface SkillDirectory {
  dir: string;
  source: string;
}

/** What {@link discoverSkills} found. */
export interface SkillDiscovery {
  skills: Skill[];
  problems: SkillProblem[];
}

function isWithin(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

const errCode = (err: unknown) => (err as NodeJS.ErrnoException | undefined)?.code ?? 'error';

/**
 * Reads the skill folders of each directory, in order (folders by name). A folder without a
 * `SKILL.md` is not a skill and is passed over; every other folder that cannot be a skill is
 * skipped with a reason: its `SKILL.md` is unreadable, larger than `maxBytes`, a symlink (or
 * the folder is one) leading outside, or its front matter is malformed; its name is already
 * taken (by `taken` or an earlier folder). A missing or unreadable directory is a problem too.
 * Never throws.
 */
export async function discoverSkills(
  dirs: readonly SkillDirectory[],
  opts: { maxBytes: number; taken?: ReadonlyMap<string, string> },
): Promise<SkillDiscovery> {
  const skills: Skill[] = [];
  const problems: SkillProblem[] = [];
  const names = new Map(opts.taken ?? []);
  for (const { dir, source } of dirs) {
    let root: string;
    let entries: string[];
    try {
      root = await realpath(dir);
      entries = (await readdir(root)).sort();
    } catch (err) {
      problems.push({ path: dir, source, reason: `the skills directory cannot be read (${errCode(err)})` });
      continue;
    }
    for (const entry of entries) {
      const folder = path.join(dir, entry);
      const found = await readSkill(root, entry, opts.maxBytes).catch((err: unknown) => ({ reason: `cannot be read (${errCode(err)})` }));
      if (found === null) continue;
      if ('reason' in found) {
        problems.push({ path: folder, source, reason: found.reason });
        continue;
      }
      const first = names.get(found.meta.name);
      if (first !== undefined) {
        problems.push({ path: folder, source, reason: `duplicate skill name "${found.meta.name}" (already defined in ${first})` });
        continue;
      }
      names.set(found.meta.name, folder);
      skills.push({ ...found.meta, body: found.body, dir: found.dir, source });
    }
  }
  return { skills, problems };
}

type Read = { meta: SkillMeta; body: string; dir: string } | { reason: string } | null;

async function readSkill(root: string, entry: string, maxBytes: number): Promise<Read> {
  const linked = path.join(root, entry);
  const info = await stat(linked).catch(() => null);
  if (!info?.isDirectory()) return null;
  const dir = await realpath(linked);
  if (!isWithin(root, dir) || dir === root) return { reason: 'the folder is a symbolic link to outside its skills directory' };
  const file = path.join(dir, SKILL_FILE);
  const own = await lstat(file).catch(() => null);
  if (!own) return null;
  const real = await realpath(file);
  if (!isWithin(dir, real)) return { reason: `${SKILL_FILE} is a symbolic link to outside its folder` };
  const st = await stat(real);
  if (!st.isFile()) return { reason: `${SKILL_FILE} is not a file` };
  const tooBig = (size: number) => ({ reason: `${SKILL_FILE} is ${size} bytes, over the cap of ${maxBytes} (skills.maxBytes)` });
  if (st.size > maxBytes) return tooBig(st.size);
  const bytes = await readFile(real);
  // The file may have grown between the stat and the read.
  if (bytes.length > maxBytes) return tooBig(bytes.length);
  const parsed = parseSkillFile(bytes.toString('utf8'));
  if (!parsed.ok) return { reason: parsed.reason };
  return { ...parsed.skill, dir };
}
