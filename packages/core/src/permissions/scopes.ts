import { RuleSyntaxError } from './errors.js';
import { matchContent, matchToolName, toolMatchKind, validateContentPattern, type MatchKind, type MatchOptions, type RuleBehavior } from './matchers.js';
import { parseRule, type PermissionRule } from './rules.js';

/** Where a rule or a mode setting applies, broad to narrow (see {@link SCOPE_ORDER}). */
export type PermissionScopeKind = 'gateway' | 'agent' | 'channel' | 'conversation' | 'role' | 'principal' | 'session';

/** The scope kinds, broad to narrow. */
export const SCOPE_ORDER: readonly PermissionScopeKind[] = Object.freeze(['gateway', 'agent', 'channel', 'conversation', 'role', 'principal', 'session']);

/** One scope instance, e.g. `{ kind: 'principal', id: 'p_42' }`. `gateway` has no id. */
export interface PermissionScope {
  kind: PermissionScopeKind;
  /** The agent, channel, conversation, role, principal or session id. */
  id?: string;
}

/** One rule at one scope. */
export interface ScopedRule {
  scope: PermissionScope;
  behavior: RuleBehavior;
  /** `Tool` or `Tool(content)`, see {@link parseRule}. */
  rule: string;
  /** Where it came from: the config file, the control API (database), or an "always allow" approval. */
  source: 'config' | 'database' | 'approval';
  /** Database id, if any. */
  id?: string;
}

/** Every rule in force, from every scope; {@link evaluateRules} picks the applicable ones. */
export type RuleSet = readonly ScopedRule[];

/** The outcome of {@link evaluateRules}. `none` means no rule applies. */
export interface RuleEvaluation {
  behavior: RuleBehavior | 'none';
  /** The deciding rule (for `deny`/`ask`/`allow`). */
  matched?: ScopedRule;
}

/** Where one call stands: the ids the inbound message resolved to (never what the model says). */
export interface CallScopes {
  agent?: string;
  channel?: string;
  conversation?: string;
  role?: string;
  principal?: string;
  session?: string;
}

/** The scope instances that apply to a call, broad to narrow, always starting with the gateway. */
export function scopesOf(call: CallScopes): PermissionScope[] {
  const out: PermissionScope[] = [{ kind: 'gateway' }];
  for (const kind of SCOPE_ORDER) {
    if (kind === 'gateway') continue;
    const id = call[kind];
    if (id !== undefined) out.push({ kind, id });
  }
  return out;
}

/**
 * Whether a rule's or setting's scope applies given the call's scope instances. The gateway
 * scope always applies; a scope with no id applies to every instance of its kind that the
 * call has.
 */
export function scopeApplies(scope: PermissionScope, applicable: readonly PermissionScope[]): boolean {
  if (scope.kind === 'gateway') return true;
  return applicable.some((s) => s.kind === scope.kind && (scope.id === undefined || scope.id === s.id));
}

/** Position of a scope kind in {@link SCOPE_ORDER} (0 = gateway, broadest). */
export function scopeRank(kind: PermissionScopeKind): number {
  return SCOPE_ORDER.indexOf(kind);
}

const parsed = new Map<string, PermissionRule>();

function parseCached(text: string): PermissionRule {
  let rule = parsed.get(text);
  if (!rule) {
    rule = parseRule(text);
    if (parsed.size >= 1000) parsed.clear();
    parsed.set(text, rule);
  }
  return rule;
}

const STRENGTH: Record<RuleBehavior, number> = { deny: 3, ask: 2, allow: 1 };

/**
 * Evaluates every applicable rule for one call. **Deny beats ask beats allow at any scope**: a
 * gateway deny wins over a session allow, and a session deny over a gateway allow. A rule
 * without content covers every call of its tool; a rule with content matches only when the
 * call has rule content (`content` ≠ undefined) that its pattern matches, using the tool's
 * match kind. Among rules of the winning behavior, the broadest scope is reported.
 *
 * A malformed applicable allow rule is ignored (it grants nothing).
 *
 * @throws {RuleSyntaxError} when an applicable deny or ask rule is malformed, so that a broken
 *   deny never fails open (validate rule sets on load with {@link validateRuleSet}).
 */
export function evaluateRules(
  ruleSet: RuleSet,
  toolName: string,
  content: string | undefined,
  applicable: readonly PermissionScope[],
  opts: MatchOptions = {},
): RuleEvaluation {
  let best: ScopedRule | undefined;
  const kind = toolMatchKind(toolName, opts);
  for (const entry of ruleSet) {
    if (!scopeApplies(entry.scope, applicable)) continue;
    let matches: boolean;
    try {
      matches = ruleMatches(parseCached(entry.rule), entry.behavior, toolName, kind, content, opts);
    } catch (err) {
      // A malformed allow rule grants nothing; a malformed deny or ask rule must not fail open.
      if (entry.behavior === 'allow' && err instanceof RuleSyntaxError) continue;
      throw err;
    }
    if (!matches) continue;
    if (
      !best ||
      STRENGTH[entry.behavior] > STRENGTH[best.behavior] ||
      (entry.behavior === best.behavior && scopeRank(entry.scope.kind) < scopeRank(best.scope.kind))
    ) {
      best = entry;
    }
  }
  return best ? { behavior: best.behavior, matched: best } : { behavior: 'none' };
}

function ruleMatches(
  rule: PermissionRule,
  behavior: RuleBehavior,
  toolName: string,
  kind: MatchKind,
  content: string | undefined,
  opts: MatchOptions,
): boolean {
  if (!matchToolName(rule.tool, toolName, opts.aliases)) return false;
  if (rule.content === undefined) return true;
  return content !== undefined && matchContent(kind, rule.content, content, behavior, opts.workspace);
}

/** One problem found by {@link validateRuleSet}. */
export interface RuleProblem {
  index: number;
  entry: ScopedRule;
  message: string;
}

/**
 * Checks every rule of a set (syntax, scope kind and id, content pattern for the tool's match
 * kind) without evaluating anything; load-time validation for config files and the control API.
 */
export function validateRuleSet(ruleSet: RuleSet, opts: Pick<MatchOptions, 'aliases' | 'matchKinds'> = {}): RuleProblem[] {
  const problems: RuleProblem[] = [];
  ruleSet.forEach((entry, index) => {
    const problem = (message: string): void => {
      problems.push({ index, entry, message });
    };
    if (!SCOPE_ORDER.includes(entry.scope.kind)) problem(`unknown scope kind ${JSON.stringify(entry.scope.kind)}`);
    else if (entry.scope.kind === 'gateway' && entry.scope.id !== undefined) problem('the gateway scope takes no id');
    else if (typeof entry.behavior !== 'string' || !Object.hasOwn(STRENGTH, entry.behavior)) problem(`unknown behavior ${JSON.stringify(entry.behavior)}`);
    else {
      try {
        const rule = parseRule(entry.rule);
        if (rule.content !== undefined) validateContentPattern(toolMatchKind(rule.tool, opts), rule.content, entry.rule);
      } catch (err) {
        problem(err instanceof RuleSyntaxError ? err.message : String(err));
      }
    }
  });
  return problems;
}
