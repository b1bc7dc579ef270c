import type { Tool } from '@switchboard/agent';
import { z } from 'zod';
import { SKILL_NAME, SKILL_NAME_MAX } from './front-matter.js';
import { SKILL_TOOL } from './skill-run.js';

const skillInput = z.strictObject({
  name: z.string().max(SKILL_NAME_MAX).regex(SKILL_NAME, 'a skill name from the list of skills').describe('The skill to load, as listed under "Skills".'),
});

/** Input of the `skill` tool. */
export type SkillInput = z.output<typeof skillInput>;

/**
 * The `skill` tool: loads one of the run's skills by name (see `SkillRun.load`): its instructions
 * come back as the result, and its own folder becomes readable with `read_file`. Read-only (it
 * changes nothing but what this run may still do, which only narrows); rules match the skill's
 * name (`skill(deploy-checklist)`). One gateway-wide instance: the run's skills come from
 * `ToolContext.skills`, so a subagent loading a skill loads it into its own run.
 */
export function createSkillTool(): Tool<SkillInput> {
  return {
    name: SKILL_TOOL,
    description:
      'Load a skill: operator-provided instructions (and files) for a particular task, listed by name and description under "Skills". ' +
      'Call it before starting a task a skill describes; a skill may limit which tools you can use until the end of the turn.',
    input: skillInput,
    readOnly: true,
    concurrencySafe: false,
    // The body is bounded by skills.maxBytes; a cut would hide the instructions' end.
    resultBudget: 'exempt',
    ruleContent: (input) => input.name,
    async call(input, ctx) {
      if (!ctx.skills) return { isError: true, content: 'No skills are available in this conversation.' };
      return ctx.skills.load(input.name);
    },
  };
}
