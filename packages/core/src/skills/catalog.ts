import path from 'node:path';
import type { Logger } from 'pino';
import { discoverSkills, type Skill, type SkillProblem } from './discover.js';

/** The resolved `skills` settings of the gateway and of each agent. */
export interface SkillSettings {
  /** `skills.dirs`: skill folders every agent offers. */
  dirs: readonly string[];
  /** `skills.maxBytes`: the cap of one `SKILL.md`. */
  maxBytes: number;
  /** Per agent: `agents.<id>.skills.dirs` (its own skills) and `.workspace` (skills from the turn's workspace `skills/` folder). */
  agents: ReadonlyMap<string, { dirs: readonly string[]; workspace: boolean }>;
}

/** The folder of a workspace whose skill folders an agent with `skills.workspace` reads. */
export const WORKSPACE_SKILLS_DIR = 'skills';

/**
 * Every configured skill, read once at start-up from the operator's directories (never from a
 * tool: nothing the model does or reads registers a skill). Names are unique gateway-wide: the
 * gateway's directories come first, then each agent's in config order; a later folder with a
 * taken name is skipped. Skills from a turn's workspace (an agent's `skills.workspace`, off by
 * default: the model can write there) are read per turn and never shadow a configured one.
 */
export class SkillCatalog {
  private constructor(
    private readonly settings: SkillSettings,
    private readonly gateway: readonly Skill[],
    private readonly byAgent: ReadonlyMap<string, readonly Skill[]>,
    /** What was skipped at start-up, and why. */
    readonly problems: readonly SkillProblem[],
  ) {}

  /** Reads every configured directory; each problem is logged (a warning naming the folder, the key and the reason). */
  static async load(settings: SkillSettings, log?: Logger): Promise<SkillCatalog> {
    const problems: SkillProblem[] = [];
    const gateway = await discoverSkills(
      settings.dirs.map((dir) => ({ dir, source: 'skills.dirs' })),
      { maxBytes: settings.maxBytes },
    );
    problems.push(...gateway.problems);
    const taken = new Map(gateway.skills.map((s) => [s.name, s.dir]));
    const byAgent = new Map<string, readonly Skill[]>();
    for (const [agentId, own] of settings.agents) {
      const found = await discoverSkills(
        own.dirs.map((dir) => ({ dir, source: `agents.${agentId}.skills.dirs` })),
        { maxBytes: settings.maxBytes, taken },
      );
      for (const s of found.skills) taken.set(s.name, s.dir);
      problems.push(...found.problems);
      byAgent.set(agentId, found.skills);
    }
    for (const p of problems) log?.warn({ skill: p.path, key: p.source, reason: p.reason }, `skill skipped: ${p.reason}`);
    return new SkillCatalog(settings, gateway.skills, byAgent, problems);
  }

  /** Every configured skill, each with the agents that offer it (`*`: every agent). */
  all(): Array<{ skill: Skill; agents: '*' | string[] }> {
    return [
      ...this.gateway.map((skill) => ({ skill, agents: '*' as const })),
      ...[...this.byAgent].flatMap(([agentId, skills]) => skills.map((skill) => ({ skill, agents: [agentId] }))),
    ];
  }

  /** Whether an agent may offer skills at all (configured ones, or workspace skills). */
  offersSkills(agentId: string): boolean {
    return this.gateway.length > 0 || (this.byAgent.get(agentId)?.length ?? 0) > 0 || this.settings.agents.get(agentId)?.workspace === true;
  }

  /**
   * The skills of one turn of an agent: the gateway's, the agent's, and — with the agent's
   * `skills.workspace` on — those in the turn's `<workspace>/skills/` (a folder with a taken name,
   * or a malformed one, is skipped and logged).
   */
  async forTurn(agentId: string, workspace: string | undefined, log?: Logger): Promise<Skill[]> {
    const configured = [...this.gateway, ...(this.byAgent.get(agentId) ?? [])];
    if (this.settings.agents.get(agentId)?.workspace !== true || workspace === undefined) return configured;
    const found = await discoverSkills([{ dir: path.join(workspace, WORKSPACE_SKILLS_DIR), source: `agents.${agentId}.skills.workspace` }], {
      maxBytes: this.settings.maxBytes,
      taken: new Map(this.all().map(({ skill }) => [skill.name, skill.dir])),
    });
    for (const p of found.problems) {
      if (p.reason.startsWith('the skills directory cannot be read (ENOENT)')) continue;
      log?.warn({ skill: p.path, key: p.source, reason: p.reason }, `workspace skill skipped: ${p.reason}`);
    }
    return [...configured, ...found.skills];
  }
}
