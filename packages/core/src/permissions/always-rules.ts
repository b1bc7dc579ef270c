import type { AnyTool } from '@switchboard/agent';
import { exactRuleFor } from './exact-rule.js';
import { hostOf, type MatchKind } from './matchers.js';

// A host a `domain:` pattern can hold as written: DNS names, IPv4, bracketed IPv6.
const PLAIN_HOST = /^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])$/u;

/**
 * The one rule "always allow" saves for a single-content call: for a `domain` tool (`web_fetch`)
 * the call's domain, `web_fetch(domain:<host>)`, which also covers the host's subdomains (see
 * `matchDomain`): "always allow this domain"; for every other tool, and a content without a plain
 * host, the rule that matches exactly that call ({@link exactRuleFor}).
 */
export function singleAlwaysRule(toolName: string, content: string | undefined, kind: MatchKind, workspace?: string): string {
  if (kind === 'domain' && content !== undefined) {
    const host = hostOf(content);
    if (host !== undefined && PLAIN_HOST.test(host)) return `${toolName}(domain:${host})`;
  }
  return exactRuleFor(toolName, content, kind, workspace);
}

/**
 * Commands that change what the parts after them do (the directory, the environment, options,
 * definitions) or run text as a command. A saved allow for one of them, recombined with other
 * saved parts, would allow calls nobody approved (`cd src && rm x` must not leave `rm x` allowed
 * in the root), so a call holding one saves no rule.
 */
const CONTEXT_COMMANDS = new Set([
  '.',
  'alias',
  'builtin',
  'cd',
  'command',
  'declare',
  'enable',
  'eval',
  'exec',
  'export',
  'hash',
  'local',
  'popd',
  'pushd',
  'readonly',
  'set',
  'shopt',
  'source',
  'trap',
  'typeset',
  'umask',
  'unalias',
  'unset',
]);
const ASSIGNMENT_ONLY = /^[A-Za-z_][A-Za-z0-9_]*=\S*(?: [A-Za-z_][A-Za-z0-9_]*=\S*)*$/u;

/**
 * Whether one part's saved rule would mean the same wherever it is used again: no expansion in
 * written form (`$`, a backtick: their value depends on what ran before) and no command that
 * changes the context of later parts (see {@link CONTEXT_COMMANDS}, or a bare assignment).
 */
export function generalisablePart(part: string): boolean {
  if (/[$`]/u.test(part)) return false;
  if (ASSIGNMENT_ONLY.test(part)) return false;
  const first = part.trim().split(/\s+/u)[0] ?? '';
  return first !== '' && !CONTEXT_COMMANDS.has(first);
}

/**
 * The rules "always allow" saves for one approved call, in their stored form (one text per
 * approval, see {@link storedAlwaysRules}):
 * - a tool without `ruleContents`: its one rule ({@link singleAlwaysRule}: exact, or a domain);
 * - a tool with `ruleContents` (`exec`): one exact rule per distinct part, stored as a JSON list —
 *   each later call is allowed by them only if every one of its parts was approved — or an empty
 *   list (no rule) when any part is unsafe to generalise ({@link generalisablePart}).
 *
 * @throws when the tool's `ruleContent`/`ruleContents` throws (the pipeline refused such a call already).
 */
export function alwaysRuleFor(tool: Pick<AnyTool, 'name' | 'ruleContent' | 'ruleContents'>, input: unknown, kind: MatchKind, workspace?: string): string {
  if (!tool.ruleContents) return singleAlwaysRule(tool.name, tool.ruleContent ? tool.ruleContent(input) : undefined, kind, workspace);
  const parts = tool.ruleContents(input);
  if (parts.length === 0 || !parts.every(generalisablePart)) return JSON.stringify([]);
  const rules = [...new Set(parts.map((part) => exactRuleFor(tool.name, part, kind, workspace)))];
  return rules.length === 1 ? (rules[0] ?? JSON.stringify([])) : JSON.stringify(rules);
}

/**
 * The rules a stored "always allow" text stands for: a JSON list of rules (a rule never starts
 * with `[`, so the forms cannot be confused), or one rule. A malformed list stands for none.
 */
export function storedAlwaysRules(stored: string): string[] {
  if (!stored.startsWith('[')) return [stored];
  try {
    const list: unknown = JSON.parse(stored);
    return Array.isArray(list) && list.every((r) => typeof r === 'string' && r !== '' && !r.startsWith('[')) ? list : [];
  } catch {
    return [];
  }
}
