import path from 'node:path';
import { compileSafeRegex, escapeRegExp, type SafeRegex } from '@switchboard/agent';
import { RuleSyntaxError } from './errors.js';

const cache = new Map<string, SafeRegex>();
const CACHE_LIMIT = 1000;

/**
 * Compiles a workspace path glob to an anchored pattern on the linear-time engine (RE2: a rule
 * with several `**` or `*` cannot make a long model-chosen path backtrack):
 * `*` = any run of characters within one segment (dotfiles included), `?` = one character
 * except `/`, `{a,b}` = alternatives, `**` as a whole segment = any number of segments
 * (`**\/*.env` matches `.env` and `a/b/x.env`). A trailing `/**` or `/` also matches the
 * directory itself, so `secrets/**` covers `list_files(secrets)`. Every other character is
 * literal. Patterns are relative to the workspace root.
 *
 * @throws {RuleSyntaxError} for an empty pattern, a leading `/`, a `..` segment or unbalanced braces.
 */
export function compilePathGlob(pattern: string): SafeRegex {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const re = compileRule(pattern, `^${globSource(pattern)}$`);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(pattern, re);
  return re;
}

function globSource(pattern: string): string {
  let p = pattern;
  while (p.startsWith('./')) p = p.slice(2);
  if (p === '' || p === '.') throw new RuleSyntaxError(pattern, 'the path pattern is empty (use ** for every path)');
  if (p.startsWith('/')) {
    throw new RuleSyntaxError(pattern, 'path patterns are relative to the workspace; drop the leading "/"');
  }
  if (p.split('/').includes('..')) throw new RuleSyntaxError(pattern, 'path patterns may not contain ".." segments');
  if (p.endsWith('/')) p += '**';
  const segments = p.split('/').filter((seg, i, all) => !(seg === '**' && all[i - 1] === '**'));
  let out = '';
  segments.forEach((seg, i) => {
    const last = i === segments.length - 1;
    if (seg === '**') {
      if (segments.length === 1) out += '.*';
      else if (last)
        out += '(?:/.*)?'; // the directory itself or anything below it
      else if (i === 0) out += '(?:[^/]+/)*';
      else out += '/(?:[^/]+/)*';
      return;
    }
    const prevGlobstar = i > 0 && segments[i - 1] === '**';
    if (i > 0 && !prevGlobstar) out += '/';
    out += segmentSource(seg, pattern);
  });
  return out;
}

function segmentSource(seg: string, pattern: string): string {
  let out = '';
  let depth = 0;
  for (let i = 0; i < seg.length; i++) {
    const ch = seg.charAt(i);
    if (ch === '*') {
      while (seg.charAt(i + 1) === '*') i++; // `a**b` inside a segment is just `*`
      out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else if (ch === '{') {
      depth++;
      out += '(?:';
    } else if (ch === '}') {
      if (depth === 0) throw new RuleSyntaxError(pattern, 'a "}" without a matching "{"');
      depth--;
      out += ')';
    } else if (ch === ',' && depth > 0) out += '|';
    else out += escapeRegExp(ch);
  }
  if (depth > 0) throw new RuleSyntaxError(pattern, 'a "{" is never closed');
  return out;
}

/**
 * Places a path the model named (relative, or absolute) inside the workspace, lexically:
 * returns it workspace-relative and `/`-separated (`''` for the root itself), or `undefined`
 * when it lies outside the workspace. Without a workspace, any path with a `..` segment or an
 * absolute path is refused (`undefined`). Symbolic links are not resolved here — the file tools'
 * realpath confinement is the boundary for those.
 */
export function toWorkspaceRelative(p: string, workspace?: string): string | undefined {
  if (p.includes('\0')) return undefined;
  const posix = p.replace(/\\/gu, '/');
  if (workspace === undefined) {
    if (posix.startsWith('/') || posix.split('/').includes('..')) return undefined;
    const n = path.posix.normalize(posix);
    return n === '.' || n === './' ? '' : n.replace(/\/+$/u, '');
  }
  const root = path.posix.resolve(workspace.replace(/\\/gu, '/'));
  const rel = path.posix.relative(root, path.posix.resolve(root, posix));
  if (rel === '..' || rel.startsWith('../') || path.posix.isAbsolute(rel)) return undefined;
  return rel;
}

/**
 * Whether `pattern` (see {@link compilePathGlob}) matches the path `p`. `p` is placed in the
 * workspace first ({@link toWorkspaceRelative}); a path that cannot be placed never matches.
 */
export function matchPath(pattern: string, p: string, workspace?: string): boolean {
  const rel = toWorkspaceRelative(p, workspace);
  if (rel === undefined) return false;
  return compilePathGlob(pattern).test(rel);
}

// Rule patterns are bounded by the rule grammar, not limits.regexMaxLength; RE2's own size limit still applies.
function compileRule(pattern: string, source: string): SafeRegex {
  try {
    return compileSafeRegex(source, { dotAll: true, maxLength: Infinity });
  } catch (err) {
    throw new RuleSyntaxError(pattern, `the path pattern cannot be compiled (${err instanceof Error ? err.message : String(err)})`);
  }
}
