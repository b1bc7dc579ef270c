import type { MatchOptions } from './matchers.js';
import { matchToolName } from './matchers.js';
import { parseRule } from './rules.js';
import { scopeApplies, type PermissionScope, type RuleSet } from './scopes.js';

/**
 * The tools to show the model for one turn: every tool except those denied outright, i.e.
 * covered by an applicable deny rule **without content** (`write_file`, `mcp__github`,
 * `mcp__github__*`, aliases included). A content deny (`write_file(secrets/**)`) leaves the
 * tool visible, since other calls may pass. The mode hides nothing: in `plan` mode the
 * non-read-only tools stay visible (the model plans with them; calls are denied with a
 * plan-mode message) so the tool list, and the prompt cache, stay stable when the mode changes.
 * Malformed rules are skipped here; while a malformed deny or ask rule applies, the pipeline
 * refuses every call.
 */
export function preFilter<T extends { name: string }>(
  tools: readonly T[],
  ruleSet: RuleSet,
  scopes: readonly PermissionScope[],
  opts: Pick<MatchOptions, 'aliases'> = {},
): T[] {
  const blanket: string[] = [];
  for (const entry of ruleSet) {
    if (entry.behavior !== 'deny' || !scopeApplies(entry.scope, scopes)) continue;
    let tool: string;
    try {
      const rule = parseRule(entry.rule);
      if (rule.content !== undefined) continue;
      tool = rule.tool;
    } catch {
      continue;
    }
    blanket.push(tool);
  }
  return tools.filter((t) => !blanket.some((pattern) => matchToolName(pattern, t.name, opts.aliases)));
}
