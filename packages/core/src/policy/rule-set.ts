import type { RoomPolicy } from '../boundary/policy.js';
import type { PermissionScope, ScopedRule } from '../permissions/scopes.js';
import type { StoredRule } from '../storage.js';
import type { PolicySettings, RuleLists } from './settings.js';

/** Expands a rule text into the rules it stands for (a `group:*` into one per tool). */
export type RuleExpander = (rule: string) => string[];

const BEHAVIORS = ['allow', 'ask', 'deny'] as const;

/** The rules of the settings: gateway scope, then each agent's. */
export function settingsRules(settings: PolicySettings, expand: RuleExpander): ScopedRule[] {
  const out: ScopedRule[] = [];
  const add = (scope: PermissionScope, lists: RuleLists) => {
    for (const behavior of BEHAVIORS) {
      for (const text of lists[behavior]) for (const rule of expand(text)) out.push({ scope, behavior, rule, source: 'config' });
    }
  };
  add({ kind: 'gateway' }, settings.rules);
  for (const [id, agent] of settings.agents) add({ kind: 'agent', id }, agent.rules);
  return out;
}

/** One stored rule as scoped rules: `database` when an operator made it, `approval` when "always allow" did. */
export function storedRules(stored: StoredRule, expand: RuleExpander): ScopedRule[] {
  const scope: PermissionScope = stored.scopeId === null ? { kind: stored.scopeKind } : { kind: stored.scopeKind, id: stored.scopeId };
  const source = stored.createdBy.startsWith('operator:') ? 'database' : 'approval';
  return expand(stored.rule).map((rule) => ({ scope, behavior: stored.behavior, rule, source, id: stored.id }));
}

/** A room's `denyTools` as deny rules at its conversation scope (so the pre-filter hides them and the rules refuse them). */
export function roomDenyRules(room: RoomPolicy, conversationId: string, expand: RuleExpander): ScopedRule[] {
  const scope: PermissionScope = { kind: 'conversation', id: conversationId };
  return (room.denyTools ?? []).flatMap(expand).map((rule) => ({ scope, behavior: 'deny' as const, rule, source: 'config' as const }));
}
