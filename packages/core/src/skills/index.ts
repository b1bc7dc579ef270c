export { SkillCatalog, WORKSPACE_SKILLS_DIR, type SkillSettings } from './catalog.js';
export { DEFAULT_SKILL_MAX_BYTES, discoverSkills, SKILL_FILE, type Skill, type SkillDirectory, type SkillDiscovery, type SkillProblem } from './discover.js';
export {
  parseSkillFile,
  SKILL_NAME,
  SKILL_NAME_MAX,
  SKILL_DESCRIPTION_MAX,
  ALLOWED_TOOLS_MAX,
  type ParsedSkill,
  type SkillMeta,
  type SkillParse,
} from './front-matter.js';
export { ALWAYS_PERMITTED, SKILL_TOOL, SkillRun, type SkillRunOptions } from './skill-run.js';
export { createSkillTool, type SkillInput } from './skill-tool.js';
export { skillCapabilityId, skillDenied, skillOfCapability, skillSwitchRule } from './switches.js';
export { skillsLoadedInTurn } from './resume.js';
