import type { OfferContext } from '../capability-offers.js';
import type { MatchOptions } from './matchers.js';
import { matchToolName } from './matchers.js';
import { parseRule } from './rules.js';
import { scopeApplies, type PermissionScope, type RuleSet } from './scopes.js';

/** Options of {@link preFilter}. */
export interface PreFilterOptions extends Pick<MatchOptions, 'aliases'> {
  /** Who is offered what: without it every tool is offered (before deny rules). */
  offers?: OfferContext;
}

/**
 * Whether a tool is offered to the speaker: their role is in its `offeredTo`, or an operator's
 * offer-switch for it applies at one of the call's scopes (same {@link scopeApplies} as rules).
 */
function isOffered(name: string, offers: OfferContext | undefined, scopes: readonly PermissionScope[]): boolean {
  if (!offers || offers.offeredTo(name).includes(offers.role)) return true;
  return offers.switches.some((s) => s.tool === name && scopeApplies(s.scope, scopes));
}

/**
 * The tools to show the model for one turn. First, only the tools **offered** to the speaker
 * (`opts.offers`: their role is in the tool's `offeredTo`, or an offer-switch applies at one of
 * the call's scopes). Then every tool except those denied outright, i.e.
 * covered by an applicable deny rule **without content** (`write_file`, `mcp__github`,
 * `mcp__github__*`, aliases included). A content deny (`write_file(secrets/**)`) leaves the
 * tool visible, since other calls may pass. The mode hides nothing: in `plan` mode the
 * non-read-only tools stay visible (the model plans with them; calls are denied with a
 * plan-mode message) so the tool list, and the prompt cache, stay stable when the mode changes.
 * Malformed rules are skipped here; while a malformed deny or ask rule applies, the pipeline
 * refuses every call. Deny wins: an offer-switch never brings back a tool a deny rule hides.
 */
export function preFilter<T extends { name: string }>(
  tools: readonly T[],
  ruleSet: RuleSet,
  scopes: readonly PermissionScope[],
  opts: PreFilterOptions = {},
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
  return tools.filter((t) => isOffered(t.name, opts.offers, scopes) && !blanket.some((pattern) => matchToolName(pattern, t.name, opts.aliases)));
}
