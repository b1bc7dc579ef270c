import type { AnyTool, PermissionResult } from '@switchboard/agent';
import type { RuleEvaluation, ScopedRule } from './scopes.js';

/**
 * The rules' verdict on a call with several parts (a tool with `ruleContents`, e.g. one simple
 * command each of an `exec` line). `part` is the part that decided a deny or ask; `rules` lists
 * the allow rules that together covered every part.
 */
export interface PartRuleEvaluation extends RuleEvaluation {
  part?: string;
  rules?: readonly ScopedRule[];
}

/**
 * Combines per-part rule evaluations: a deny on any part denies the call (the first such part
 * decides); else an ask on any part asks; the call is allowed only when every part is allowed by
 * some rule; anything else is `none` (the mode decides). `evaluate` is called once per part.
 */
export function evaluateParts(parts: readonly string[], evaluate: (content: string) => RuleEvaluation): PartRuleEvaluation {
  const results = parts.map((part) => ({ part, rules: evaluate(part) }));
  for (const behavior of ['deny', 'ask'] as const) {
    const hit = results.find((r) => r.rules.behavior === behavior && r.rules.matched);
    if (hit?.rules.matched) return { behavior, matched: hit.rules.matched, part: hit.part };
  }
  if (results.length === 0 || !results.every((r) => r.rules.behavior === 'allow' && r.rules.matched)) return { behavior: 'none' };
  const rules: ScopedRule[] = [];
  for (const r of results) if (r.rules.matched && !rules.includes(r.rules.matched)) rules.push(r.rules.matched);
  return { behavior: 'allow', matched: rules[0], rules };
}

/**
 * A tool's parts for rules (`ruleContents`), or `undefined` for a tool without them.
 *
 * @throws {Error} when `ruleContents` throws or gives no part (the contract is at least one).
 */
export function partsOf(tool: AnyTool, input: unknown): string[] | undefined {
  if (!tool.ruleContents) return undefined;
  const parts = tool.ruleContents(input);
  if (!Array.isArray(parts) || parts.length === 0 || !parts.every((part) => typeof part === 'string')) {
    throw new Error(`${tool.name} gave no rule contents for this call`);
  }
  return parts;
}

/** How the mode sees one call: read-only, a file-system edit inside the workspace, or neither. */
export interface CallClass {
  readOnly: boolean;
  /** The tool classified the call as a file-system edit inside the workspace (`access: 'edit'`). */
  edit: boolean;
}

/**
 * The per-call classification: a `passthrough` with `access: 'read'` is read-only, `'edit'` is an
 * edit inside the workspace; without `access` (or with any other answer) the tool's static
 * `readOnly` decides.
 */
export function classifyCall(tool: Pick<AnyTool, 'readOnly'>, own: PermissionResult): CallClass {
  if (own.behavior === 'passthrough' && own.access === 'read') return { readOnly: true, edit: false };
  if (own.behavior === 'passthrough' && own.access === 'edit') return { readOnly: false, edit: true };
  return { readOnly: tool.readOnly, edit: false };
}

/**
 * Whether a tool's own ask holds in every mode: one the tool raised for safety (`safety`) or for
 * running outside a sandbox (`sandbox`). `bypassPermissions` skips only the tool's other asks.
 */
export function isBindingOwnAsk(own: PermissionResult): boolean {
  return own.behavior === 'ask' && (own.source === 'safety' || own.source === 'sandbox');
}
