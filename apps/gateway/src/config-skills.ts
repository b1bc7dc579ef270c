import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_SKILL_MAX_BYTES, type SkillSettings } from '@switchboard/core';
import { z } from 'zod';

/** A directory of skill folders (a relative one is resolved like `gateway.dataDir`). */
const skillDirs = z.array(z.string().min(1).max(4096)).max(32).default([]);

/**
 * `skills` (docs/skills.md): the directories of skill folders every agent offers, and the cap of
 * one `SKILL.md`. Read once at start-up.
 */
export const skillsSchema = z
  .strictObject({
    dirs: skillDirs,
    /** A `SKILL.md` larger than this is skipped (with a logged reason and a doctor line). */
    maxBytes: z
      .number()
      .int()
      .min(256)
      .max(1024 * 1024)
      .default(DEFAULT_SKILL_MAX_BYTES),
  })
  .prefault({});

/**
 * `agents.<id>.skills`: the agent's own skill directories, and whether skills in the turn's
 * workspace `skills/` folder count too (off by default: the model can write there).
 */
export const agentSkillsSchema = z.strictObject({ dirs: skillDirs, workspace: z.boolean().default(false) }).prefault({});

/** Relative skill directories resolved against `baseDir`. */
export function resolveSkillDirs(dirs: readonly string[], baseDir: string): string[] {
  return dirs.map((dir) => (isAbsolute(dir) ? dir : resolve(baseDir, dir)));
}

/** The resolved skill settings for core's catalog. */
export function skillSettingsOf(cfg: {
  skills: { dirs: readonly string[]; maxBytes: number };
  agents: Readonly<Record<string, { skills: { dirs: readonly string[]; workspace: boolean } }>>;
}): SkillSettings {
  return {
    dirs: cfg.skills.dirs,
    maxBytes: cfg.skills.maxBytes,
    agents: new Map(Object.entries(cfg.agents).map(([id, agent]) => [id, { dirs: agent.skills.dirs, workspace: agent.skills.workspace }])),
  };
}
