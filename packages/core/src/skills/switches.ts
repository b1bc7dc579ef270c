import { evaluateRules, type PermissionScope, type RuleSet } from '../permissions/scopes.js';
import { SKILL_NAME } from './front-matter.js';
import { SKILL_TOOL } from './skill-run.js';

const PREFIX = 'skill:';

/** A skill's id in the capability registry: `skill:<name>`. */
export function skillCapabilityId(name: string): string {
  return `${PREFIX}${name}`;
}

/** The skill name of a capability id (`skill:deploy` → `deploy`), or undefined for any other id. */
export function skillOfCapability(id: string): string | undefined {
  const name = id.startsWith(PREFIX) ? id.slice(PREFIX.length) : '';
  return SKILL_NAME.test(name) ? name : undefined;
}

/**
 * The rule that switches a skill off at a scope: `skill(<name>)`, a content deny of the `skill`
 * tool. Stored like a tool's switch, it both hides the skill from the listing and refuses a
 * `skill` call that names it anyway.
 */
export function skillSwitchRule(name: string): string {
  return `${SKILL_TOOL}(${name})`;
}

/**
 * Whether a skill is switched off for a call at these scopes: a deny rule covers loading it
 * (`skill(<name>)`, or the whole `skill` tool). A malformed deny rule that applies hides it too
 * (a broken deny never fails open).
 */
export function skillDenied(name: string, ruleSet: RuleSet, scopes: readonly PermissionScope[]): boolean {
  try {
    return evaluateRules(ruleSet, SKILL_TOOL, name, scopes).behavior === 'deny';
  } catch {
    return true;
  }
}
