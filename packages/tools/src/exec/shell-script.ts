import type { Node } from 'web-tree-sitter';
import { decodeAnsiC, unescapeDoubleQuoted, unescapeUnquoted } from './shell-words.js';

/**
 * One word of a simple command as the shell would see it after quote removal. `value` is
 * undefined when the word depends on the run (a parameter expansion, a command substitution…):
 * the checks cannot know what it becomes.
 */
export interface ShellWord {
  /** The word as written. */
  text: string;
  /** The word after quote removal; undefined when it holds an expansion or substitution. */
  value: string | undefined;
  /** Starts with an unquoted `~` (tilde expansion to a home directory). */
  tilde: boolean;
  /** Holds an unquoted glob or brace pattern (`*`, `?`, `[`, `{a,b}`). */
  glob: boolean;
}

/** A redirection attached to a simple command (directly or through an enclosing statement). */
export interface ShellRedirect {
  kind: 'file' | 'heredoc' | 'herestring';
  /** The operator (`>`, `>>`, `<`, `&>`, `>&`, `<<`, `<<<`…). */
  op: string;
  /** The file a `file` redirection names; absent for a descriptor duplication (`2>&1`). */
  target?: ShellWord;
}

/** A simple command: assignments, words (the first is the command name) and redirections. */
export interface SimpleCommand {
  text: string;
  assignments: string[];
  words: ShellWord[];
  redirects: ShellRedirect[];
  /** Its standard input comes from a pipe or a heredoc/herestring. */
  stdinFed: boolean;
}

/**
 * What the checks judge, in execution order: simple commands, `[[ … ]]` tests, bare assignments
 * and declarations, constructs they refuse to judge, and scope marks (a subshell or command
 * substitution, after which a `cd` inside no longer applies).
 */
export type ScriptStep =
  | { type: 'command'; command: SimpleCommand }
  | { type: 'test'; text: string }
  | { type: 'assignment'; text: string }
  | { type: 'unjudgeable'; text: string; reason: string }
  | { type: 'push' }
  | { type: 'pop' };

interface WalkContext {
  redirects: ShellRedirect[];
  stdinFed: boolean;
}

const GLOB = /(^|[^\\])[*?[]/u;
const DYNAMIC_TYPES = new Set(['simple_expansion', 'expansion', 'command_substitution', 'arithmetic_expansion', 'process_substitution']);

/** Flattens a parsed program into the steps the checks judge. */
export function scriptSteps(root: Node): ScriptStep[] {
  const steps: ScriptStep[] = [];
  walk(root, { redirects: [], stdinFed: false }, steps);
  return steps;
}

function walk(node: Node, ctx: WalkContext, steps: ScriptStep[]): void {
  switch (node.type) {
    case 'command':
      steps.push({ type: 'command', command: simpleCommand(node, ctx, steps) });
      return;
    case 'pipeline':
      named(node).forEach((child, index) => {
        walk(child, { ...ctx, stdinFed: ctx.stdinFed || index > 0 }, steps);
      });
      return;
    case 'redirected_statement':
      redirectedStatement(node, ctx, steps);
      return;
    case 'subshell':
    case 'command_substitution':
      steps.push({ type: 'push' });
      // A subshell keeps the input and redirections of its place (`cat x | (bash)`); a substitution does not.
      for (const child of named(node)) walk(child, node.type === 'subshell' ? ctx : { redirects: [], stdinFed: false }, steps);
      steps.push({ type: 'pop' });
      return;
    case 'process_substitution':
      steps.push({ type: 'unjudgeable', text: node.text, reason: 'process substitution' });
      return;
    case 'function_definition':
      steps.push({ type: 'unjudgeable', text: node.text, reason: 'a function definition (it can shadow any command)' });
      // Its body still runs when the function is called: judge it too.
      steps.push({ type: 'push' });
      for (const child of named(node)) walk(child, { redirects: [], stdinFed: false }, steps);
      steps.push({ type: 'pop' });
      return;
    case 'test_command':
      steps.push({ type: 'test', text: node.text });
      for (const child of named(node)) walk(child, ctx, steps);
      return;
    case 'variable_assignment':
    case 'variable_assignments':
    case 'declaration_command':
    case 'unset_command':
      steps.push({ type: 'assignment', text: node.text });
      for (const child of named(node)) walk(child, ctx, steps);
      return;
    case 'heredoc_start':
    case 'heredoc_end':
    case 'comment':
      return;
    default:
      for (const child of named(node)) walk(child, ctx, steps);
  }
}

function named(node: Node): Node[] {
  return node.namedChildren.filter((child): child is Node => child !== null);
}

function redirectedStatement(node: Node, ctx: WalkContext, steps: ScriptStep[]): void {
  const own: ShellRedirect[] = [];
  const trailing: Node[] = [];
  let body: Node | undefined;
  for (const child of named(node)) {
    if (isRedirect(child)) own.push(...redirectOf(child, steps, trailing));
    else if (body === undefined) body = child;
    else trailing.push(child);
  }
  const inner: WalkContext = {
    redirects: [...ctx.redirects, ...own],
    stdinFed: ctx.stdinFed || own.some((r) => r.kind !== 'file'),
  };
  if (body) walk(body, inner, steps);
  else steps.push({ type: 'command', command: { text: node.text, assignments: [], words: [], redirects: inner.redirects, stdinFed: inner.stdinFed } });
  // `cat <<EOF | sh`: tree-sitter hangs the rest of the pipeline under the heredoc.
  for (const next of trailing) walk(next, { redirects: [], stdinFed: true }, steps);
}

function isRedirect(node: Node): boolean {
  return node.type === 'file_redirect' || node.type === 'heredoc_redirect' || node.type === 'herestring_redirect';
}

function simpleCommand(node: Node, ctx: WalkContext, steps: ScriptStep[]): SimpleCommand {
  const command: SimpleCommand = { text: node.text, assignments: [], words: [], redirects: [...ctx.redirects], stdinFed: ctx.stdinFed };
  const trailing: Node[] = [];
  for (const child of named(node)) {
    if (child.type === 'variable_assignment') {
      command.assignments.push(child.text);
      for (const part of named(child)) walk(part, { redirects: [], stdinFed: false }, steps);
    } else if (isRedirect(child)) {
      const redirects = redirectOf(child, steps, trailing);
      command.redirects.push(...redirects);
      if (redirects.some((r) => r.kind !== 'file')) command.stdinFed = true;
    } else if (child.type === 'command_name') {
      const inner = named(child)[0] ?? child;
      command.words.push(wordOf(inner, steps));
    } else if (child.type !== 'comment') {
      command.words.push(wordOf(child, steps));
    }
  }
  for (const next of trailing) walk(next, { redirects: [], stdinFed: true }, steps);
  return command;
}

function redirectOf(node: Node, steps: ScriptStep[], trailing: Node[]): ShellRedirect[] {
  const op = node.children.find((child) => child !== null && !child.isNamed)?.type ?? '';
  if (node.type === 'heredoc_redirect') {
    const out: ShellRedirect[] = [{ kind: 'heredoc', op }];
    for (const child of named(node)) {
      if (child.type === 'heredoc_body') walk(child, { redirects: [], stdinFed: false }, steps);
      else if (child.type === 'file_redirect') out.push(...redirectOf(child, steps, trailing));
      else if (child.type !== 'heredoc_start' && child.type !== 'heredoc_end') trailing.push(child);
    }
    return out;
  }
  if (node.type === 'herestring_redirect') {
    for (const child of named(node)) wordOf(child, steps);
    return [{ kind: 'herestring', op }];
  }
  const destination = named(node).filter((child) => child.type !== 'file_descriptor');
  const first = destination[0];
  if (!first || ((op === '>&' || op === '<&') && /^(\d+|-)$/u.test(first.text)) || op === '>&-' || op === '<&-') return [{ kind: 'file', op }];
  return [{ kind: 'file', op, target: wordOf(first, steps) }];
}

/** Resolves one word node (quote removal), walking any substitution inside it. */
function wordOf(node: Node, steps: ScriptStep[]): ShellWord {
  const text = node.text;
  switch (node.type) {
    case 'word':
      return { text, value: unescapeUnquoted(text), tilde: text.startsWith('~'), glob: GLOB.test(text) };
    case 'number':
      return { text, value: text, tilde: false, glob: false };
    case 'raw_string':
      return { text, value: text.slice(1, -1), tilde: false, glob: false };
    case 'ansi_c_string':
      return { text, value: decodeAnsiC(text.slice(2, -1)), tilde: false, glob: false };
    case 'string':
    case 'translated_string': {
      const parts = named(node);
      const dynamic = parts.some((part) => part.type !== 'string_content');
      for (const part of parts) if (part.type !== 'string_content') walk(part, { redirects: [], stdinFed: false }, steps);
      const inner = node.type === 'string' ? text.slice(1, -1) : text.slice(2, -1);
      return { text, value: dynamic ? undefined : unescapeDoubleQuoted(inner), tilde: false, glob: false };
    }
    case 'concatenation': {
      const parts = named(node).map((part) => wordOf(part, steps));
      const dynamic = parts.some((part) => part.value === undefined);
      return {
        text,
        value: dynamic ? undefined : parts.map((part) => part.value).join(''),
        tilde: parts[0]?.tilde ?? false,
        glob: parts.some((part) => part.glob) || /\{[^}]*,[^}]*\}/u.test(text),
      };
    }
    default:
      if (!DYNAMIC_TYPES.has(node.type) && named(node).length === 0) return { text, value: text, tilde: false, glob: GLOB.test(text) };
      walk(node, { redirects: [], stdinFed: false }, steps);
      return { text, value: undefined, tilde: false, glob: false };
  }
}
