import { judgeWords } from './command-kinds.js';
import type { ShellParser } from './shell-parser.js';
import type { ShellWord, SimpleCommand } from './shell-script.js';

const normalize = (text: string): string => text.trim().replace(/\s+/gu, ' ');

/**
 * The rule content of one simple command: its assignments and words after quote removal (an
 * expansion keeps its written form), then its file redirections as `>target` (one to `/dev/null`
 * left out), joined with single spaces. The one formula the checks' parts and `exec(...)` rule
 * matching share.
 */
export function commandRuleContent(command: Pick<SimpleCommand, 'assignments' | 'words'> & { redirects?: SimpleCommand['redirects'] }): string {
  const redirects = (command.redirects ?? []).flatMap((r) => (r.kind !== 'file' || r.target === undefined ? [] : [redirectContent(r.op, r.target)]));
  const words = command.words.map((word) => word.value ?? word.text);
  return normalize([...command.assignments, ...words, ...redirects.filter((r) => r !== '')].join(' '));
}

/**
 * One rule content per simple command of `command` (assignments and words after quote removal,
 * joined with single spaces; an expansion keeps its written form; then each file redirection as
 * its operator and target, `>notes.txt`, except one to `/dev/null`), in execution order. A line
 * the grammar rejects yields itself, normalised, as its only content. Keeping redirections means
 * a prefix allow (`exec(echo:*)`, which never covers shell operators) does not cover `echo hi >f`.
 * A command another one runs (`timeout 5 rm x`, `nice make`, `xargs rm`, `sudo …` — what the
 * checks unwrap) is a content of its own right after its wrapper, so `exec(rm:*)` denies
 * `timeout 5 rm x` and `exec(timeout:*)` alone does not allow it.
 */
export function ruleContentsOf(parser: ShellParser, command: string): string[] {
  const steps = parser.parse(command);
  if (steps === undefined) return [normalize(command)];
  const out: string[] = [];
  for (const step of steps) {
    if (step.type === 'command') {
      const content = commandRuleContent(step.command);
      if (content !== '') out.push(content);
      out.push(...innerContents(step.command.words, 0));
    } else if (step.type === 'test' || step.type === 'assignment' || step.type === 'unjudgeable') {
      out.push(normalize(step.text));
    }
  }
  return out;
}

/** `>target` for one file redirection (the target after quote removal, or as written); `''` for `/dev/null`. */
function redirectContent(op: string, target: ShellWord): string {
  const value = target.value ?? target.text;
  return value === '/dev/null' ? '' : `${op}${value}`;
}

/** The contents of the commands `words` runs through wrappers, outermost first (bounded depth). */
function innerContents(words: ShellWord[], depth: number): string[] {
  if (depth >= 16 || words.length === 0) return [];
  const out: string[] = [];
  for (const inner of judgeWords(withBaseName(words)).inner ?? []) {
    const content = commandRuleContent({ assignments: [], words: inner });
    if (content !== '') out.push(content);
    out.push(...innerContents(inner, depth + 1));
  }
  return out;
}

/** `/usr/bin/timeout …` is judged as `timeout …`, as the checks do. */
function withBaseName(words: ShellWord[]): ShellWord[] {
  const first = words[0];
  const name = first?.value ?? '';
  if (!first || !/^\/(usr\/)?(local\/)?s?bin\/[^/]+$/u.test(name)) return words;
  return [{ ...first, value: name.slice(name.lastIndexOf('/') + 1) }, ...words.slice(1)];
}
