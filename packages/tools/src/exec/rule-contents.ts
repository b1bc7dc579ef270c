import type { ShellParser } from './shell-parser.js';
import type { SimpleCommand } from './shell-script.js';

const normalize = (text: string): string => text.trim().replace(/\s+/gu, ' ');

/**
 * The rule content of one simple command: its assignments and words after quote removal (an
 * expansion keeps its written form), joined with single spaces. The one formula the checks' parts
 * and `exec(...)` rule matching share.
 */
export function commandRuleContent(command: Pick<SimpleCommand, 'assignments' | 'words'>): string {
  return normalize([...command.assignments, ...command.words.map((word) => word.value ?? word.text)].join(' '));
}

/**
 * One rule content per simple command of `command` (assignments and words after quote removal,
 * joined with single spaces; an expansion keeps its written form), in execution order. A line
 * the grammar rejects yields itself, normalised, as its only content.
 */
export function ruleContentsOf(parser: ShellParser, command: string): string[] {
  const steps = parser.parse(command);
  if (steps === undefined) return [normalize(command)];
  const out: string[] = [];
  for (const step of steps) {
    if (step.type === 'command') {
      const content = commandRuleContent(step.command);
      if (content !== '') out.push(content);
    } else if (step.type === 'test' || step.type === 'assignment' || step.type === 'unjudgeable') {
      out.push(normalize(step.text));
    }
  }
  return out;
}

/**
 * Whether an `exec(...)` rule's content matches one part's content: `prefix:*` matches `prefix`
 * alone or followed by a space (`git:*` matches `git` and `git status`, never `gitx`); anything
 * else must equal the content (whitespace runs count as one space).
 */
export function matchesExecRule(rule: string, content: string): boolean {
  const part = normalize(content);
  if (rule.endsWith(':*')) {
    const prefix = normalize(rule.slice(0, -2));
    return prefix !== '' && (part === prefix || part.startsWith(`${prefix} `));
  }
  return normalize(rule) === part;
}
