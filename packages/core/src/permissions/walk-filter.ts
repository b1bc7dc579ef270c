import type { PathFilter } from '@switchboard/agent';
import { matchToolName, type MatchOptions } from './matchers.js';
import { realRuleContent } from './real-path.js';
import { parseRule } from './rules.js';
import { evaluateRules, scopeApplies, type PermissionScope, type RuleSet } from './scopes.js';

/** What {@link walkFilter} decides with: the same rules and scopes as the turn's calls. */
export interface WalkFilterEnv extends Pick<MatchOptions, 'aliases' | 'matchKinds'> {
  ruleSet: RuleSet;
  scopes: readonly PermissionScope[];
  /** Absolute path of the turn's workspace. */
  workspace: string;
}

/**
 * The permission layer's answer to "may this walk return this entry?" (a walk being
 * `search_files`, `list_files` or any tool that goes through a directory tree). Each entry is
 * checked against the rules of the walking tool, on its path as written and where it really
 * leads (symlinks resolved), exactly as a direct call on that path would be: a deny withholds
 * it, and so does an ask (a walk does not prompt per file). An entry whose real location cannot
 * be found, or whose rules cannot be read, is withheld too. Never throws.
 */
export function walkFilter(env: WalkFilterEnv): PathFilter {
  const opts = { aliases: env.aliases, matchKinds: env.matchKinds, workspace: env.workspace };
  const passes = (toolName: string, content: string): boolean => {
    const r = evaluateRules(env.ruleSet, toolName, content, env.scopes, opts);
    return r.behavior !== 'deny' && r.behavior !== 'ask';
  };
  // Without an applicable deny or ask rule for the tool, every entry passes: skip the lookups.
  const restricted = new Map<string, boolean>();
  const isRestricted = (toolName: string): boolean => {
    let r = restricted.get(toolName);
    if (r === undefined) {
      r = env.ruleSet.some((entry) => {
        if (entry.behavior === 'allow' || !scopeApplies(entry.scope, env.scopes)) return false;
        try {
          return matchToolName(parseRule(entry.rule).tool, toolName, env.aliases);
        } catch {
          return true; // a malformed deny or ask rule: let evaluation refuse
        }
      });
      restricted.set(toolName, r);
    }
    return r;
  };
  return async (toolName, entry) => {
    try {
      if (!isRestricted(toolName)) return true;
      if (!passes(toolName, entry.relative)) return false;
      const real = await realRuleContent(entry.relative, env.workspace);
      return real === entry.relative || passes(toolName, real);
    } catch {
      return false;
    }
  };
}
