import { checkRuleSyntax } from './rules.js';

/** Tool group shorthands, usable in permission rules and in `agents.<id>.tools.profile`. */
export const TOOL_GROUPS = ['group:fs', 'group:web', 'group:runtime', 'group:memory', 'group:mcp'] as const;
export type ToolGroup = (typeof TOOL_GROUPS)[number];

/** A group rule: `group:<name>` with an optional `(content)` (groups 1 and 2). */
export const GROUP_RULE = /^group:([a-z]+)(\(.*\))?$/su;

/**
 * Checks a permission rule's text: `Tool`, `Tool(content)` or a group shorthand
 * `group:<fs|web|runtime|mcp>` with optional `(content)`.
 */
export function checkRuleText(text: string): { ok: true } | { ok: false; message: string } {
  const s = text.trim();
  const m = GROUP_RULE.exec(s);
  if (s.startsWith('group:')) {
    if (!m || !TOOL_GROUPS.includes(`group:${m[1]}` as ToolGroup)) {
      return { ok: false, message: `unknown tool group in ${JSON.stringify(s)}: use one of ${TOOL_GROUPS.join(', ')}` };
    }
    const check = checkRuleSyntax(`x${m[2] ?? ''}`);
    return check.ok ? { ok: true } : { ok: false, message: check.message };
  }
  const check = checkRuleSyntax(s);
  return check.ok ? { ok: true } : { ok: false, message: check.message };
}
