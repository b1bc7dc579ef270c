import { compileSafeRegex, escapeRegExp, type SafeRegex } from '@switchboard/agent';
import { canonicalToolName } from './aliases.js';
import { RuleSyntaxError } from './errors.js';
import { literalOf, matchLiteral } from './literal.js';
import { compilePathGlob, matchPath } from './path-glob.js';

/**
 * How a tool's rule content is matched:
 * - `path`: workspace path globs (`write_file(notes/**)`), see {@link compilePathGlob};
 * - `command`: shell commands, exact (`exec(npm run test)`) or by prefix (`exec(git:*)`);
 * - `domain`: hosts, `domain:x.org` covers `x.org` and its subdomains;
 * - `exact`: plain string equality (the default for tools nobody registered).
 */
export type MatchKind = 'path' | 'command' | 'domain' | 'exact';

/** What a rule does when it matches. */
export type RuleBehavior = 'allow' | 'ask' | 'deny';

/** Built-in match kinds, keyed by canonical tool name. */
export const DEFAULT_MATCH_KINDS: Readonly<Record<string, MatchKind>> = Object.freeze({
  read_file: 'path',
  write_file: 'path',
  edit_file: 'path',
  list_files: 'path',
  search_files: 'path',
  send_file: 'path',
  exec: 'command',
  bash: 'command',
  web_fetch: 'domain',
});

/** Options shared by the matchers. */
export interface MatchOptions {
  /** Extra tool-name aliases (see {@link canonicalToolName}). */
  aliases?: Readonly<Record<string, string>>;
  /** Extra match kinds by tool name, consulted before {@link DEFAULT_MATCH_KINDS}. */
  matchKinds?: Readonly<Record<string, MatchKind>>;
  /** Absolute workspace path, used to place absolute or `..` paths for `path` matching. */
  workspace?: string;
}

/** The match kind of a tool's rule content: overrides, then the defaults, else `exact`. */
export function toolMatchKind(toolName: string, opts: Pick<MatchOptions, 'aliases' | 'matchKinds'> = {}): MatchKind {
  const canonical = canonicalToolName(toolName, opts.aliases);
  const own = opts.matchKinds;
  if (own) {
    if (Object.hasOwn(own, toolName)) return own[toolName] ?? 'exact';
    if (Object.hasOwn(own, canonical)) return own[canonical] ?? 'exact';
  }
  return Object.hasOwn(DEFAULT_MATCH_KINDS, canonical) ? (DEFAULT_MATCH_KINDS[canonical] ?? 'exact') : 'exact';
}

/**
 * Whether a rule's tool part covers `toolName`. Both go through the alias table first. Matches
 * the same name, an MCP server prefix (`mcp__github` covers every `mcp__github__*` tool) and
 * `*` wildcards (`mcp__github__*`, `*`).
 */
export function matchToolName(pattern: string, toolName: string, aliases?: Readonly<Record<string, string>>): boolean {
  const p = canonicalToolName(pattern, aliases);
  const t = canonicalToolName(toolName, aliases);
  if (p === t || p === toolName) return true;
  if (p.includes('*')) {
    const re = toolNamePattern(p);
    return re.test(t) || re.test(toolName);
  }
  const server = p.startsWith('mcp__') ? p.slice('mcp__'.length) : undefined;
  return server !== undefined && server !== '' && !server.includes('__') && t.startsWith(`${p}__`);
}

// Characters that let one command line run another command or read a substitution.
const SHELL_META = /[;&|<>`$\n\r()]/u;
const SEGMENT_SPLIT = /&&|\|\||[;&|\n\r`()]|\$\(/u;
const WRAPPERS = new Set(['sudo', 'env', 'command', 'nohup', 'time', 'exec', 'builtin']);

function normalizeCommand(command: string): string {
  return command.trim().replace(/\s+/gu, ' ');
}

// `FOO=1 sudo /usr/bin/git push` → `git push`: how a deny rule sees one segment.
function strippedSegment(segment: string): string {
  const words = normalizeCommand(segment).split(' ');
  while (words.length > 1 && (/^[A-Za-z_][A-Za-z0-9_]*=/u.test(words[0] ?? '') || WRAPPERS.has(words[0] ?? ''))) {
    words.shift();
  }
  const first = words[0] ?? '';
  words[0] = first.slice(first.lastIndexOf('/') + 1);
  return words.join(' ');
}

/**
 * Whether a `command` pattern matches a command line. `prefix:*` matches `prefix` alone or
 * followed by a space (`git:*` matches `git` and `git status`, never `gitx`); any other pattern
 * must equal the command (whitespace runs count as one space).
 *
 * Allow rules are strict: a prefix allow never matches a command containing shell operators,
 * substitutions or redirections (`git status; rm -rf ~`). Deny and ask rules are broad: they
 * match if the whole line or any `;`/`&&`/`|`/`$(…)` segment matches, after dropping leading
 * `VAR=value` assignments, wrappers (`sudo`, `env`, …) and the directory of the program.
 */
export function matchCommand(pattern: string, command: string, behavior: RuleBehavior = 'deny'): boolean {
  const prefix = pattern.endsWith(':*') ? normalizeCommand(pattern.slice(0, -2)) : undefined;
  const exact = normalizeCommand(pattern);
  const matches = (cmd: string): boolean => (prefix === undefined ? cmd === exact : cmd === prefix || cmd.startsWith(`${prefix} `));
  const whole = normalizeCommand(command);
  if (behavior === 'allow') {
    if (prefix !== undefined && SHELL_META.test(command)) return false;
    return matches(whole);
  }
  if (matches(whole)) return true;
  return command.split(SEGMENT_SPLIT).some((seg) => seg.trim() !== '' && matches(strippedSegment(seg)));
}

/** The lower-case host of a URL or `host[:port][/path]`, without a trailing dot; undefined if unparsable. */
export function hostOf(content: string): string | undefined {
  const s = content.trim();
  let host: string;
  if (s.includes('://')) {
    try {
      host = new URL(s).hostname;
    } catch {
      return undefined;
    }
  } else {
    host = s.split(/[/?#]/u)[0] ?? '';
    const at = host.lastIndexOf('@');
    if (at !== -1) host = host.slice(at + 1);
    if (!host.startsWith('[')) host = host.replace(/:\d*$/u, '');
  }
  host = host.toLowerCase().replace(/\.$/u, '');
  return host === '' ? undefined : host;
}

/**
 * Whether a `domain` pattern matches a URL or host. `domain:x.org` (the `domain:` prefix is
 * optional) matches `x.org` and `a.x.org`, never `evilx.org`; `domain:*.x.org` matches the
 * subdomains only.
 */
export function matchDomain(pattern: string, content: string): boolean {
  const host = hostOf(content);
  if (host === undefined) return false;
  let d = pattern.trim().toLowerCase();
  if (d.startsWith('domain:')) d = d.slice('domain:'.length).trim();
  d = d.replace(/\.$/u, '');
  if (d.startsWith('*.')) return host.endsWith(d.slice(1)) && host.length > d.length - 1;
  return d !== '' && (host === d || host.endsWith(`.${d}`));
}

/**
 * Whether a rule's content pattern matches a call's rule content, with the tool's match kind.
 * `behavior` matters for `command` patterns (see {@link matchCommand}). A `literal:` pattern
 * matches exactly its text, whatever the kind (see `LITERAL_PREFIX`).
 *
 * @throws {RuleSyntaxError} when a `path` pattern is malformed.
 */
export function matchContent(kind: MatchKind, pattern: string, content: string, behavior: RuleBehavior, workspace?: string): boolean {
  const literal = literalOf(pattern);
  if (literal !== undefined) return matchLiteral(kind, literal, content, workspace);
  switch (kind) {
    case 'path':
      return matchPath(pattern, content, workspace);
    case 'command':
      return matchCommand(pattern, content, behavior);
    case 'domain':
      return matchDomain(pattern, content);
    case 'exact':
      return pattern === content;
  }
}

/**
 * Checks a content pattern for a match kind without matching anything.
 *
 * @throws {RuleSyntaxError} for an empty command/domain pattern or a malformed path glob.
 */
export function validateContentPattern(kind: MatchKind, pattern: string, ruleText = pattern): void {
  const literal = literalOf(pattern);
  if (literal !== undefined) {
    if (literal === '') throw new RuleSyntaxError(ruleText, 'the literal is empty (write literal:<exact content>)');
    return;
  }
  if (kind === 'path') {
    compilePathGlob(pattern);
    return;
  }
  if (kind === 'command' && normalizeCommand(pattern.endsWith(':*') ? pattern.slice(0, -2) : pattern) === '') {
    throw new RuleSyntaxError(ruleText, 'the command pattern is empty');
  }
  if (
    kind === 'domain' &&
    pattern
      .trim()
      .replace(/^domain:/iu, '')
      .replace(/^\*\./u, '')
      .trim() === ''
  ) {
    throw new RuleSyntaxError(ruleText, 'the domain pattern is empty (write domain:example.org)');
  }
}

const toolNameCache = new Map<string, SafeRegex>();

// A `*` tool-name pattern on the linear-time engine, so `a*a*a*…` cannot backtrack on a long tool name.
function toolNamePattern(p: string): SafeRegex {
  const hit = toolNameCache.get(p);
  if (hit) return hit;
  const re = compileSafeRegex(`^${p.split('*').map(escapeRegExp).join('.*')}$`, { dotAll: true, maxLength: Infinity });
  if (toolNameCache.size >= 1000) toolNameCache.clear();
  toolNameCache.set(p, re);
  return re;
}
