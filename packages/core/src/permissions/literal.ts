import path from 'node:path';

/**
 * The prefix of a literal rule content: `Tool(literal:<text>)` matches exactly `<text>` — no
 * globs, no command prefixes, no subdomains. For path tools the comparison is of the two paths
 * placed in the workspace (so `./a`, `a` and `<workspace>/a` are the same file); `\` is an
 * ordinary file-name character there, as it is for the file tools.
 */
export const LITERAL_PREFIX = 'literal:';

/** The literal text of a `literal:` pattern, or `undefined` for any other pattern. */
export function literalOf(pattern: string): string | undefined {
  return pattern.startsWith(LITERAL_PREFIX) ? pattern.slice(LITERAL_PREFIX.length) : undefined;
}

/**
 * A path placed in the workspace exactly as the file tools place it (POSIX semantics, `\` not a
 * separator): workspace-relative, normalized, without a trailing `/`; `''` for the root;
 * `undefined` outside the workspace, with a NUL, or (without a workspace) absolute or with `..`.
 */
export function literalPath(p: string, workspace?: string): string | undefined {
  if (p === '' || p.includes('\0')) return undefined;
  let rel: string;
  if (workspace === undefined) {
    if (p.startsWith('/') || p.split('/').includes('..')) return undefined;
    rel = path.posix.normalize(p);
  } else {
    const root = path.posix.resolve(workspace);
    rel = path.posix.relative(root, path.posix.resolve(root, p));
    if (rel === '..' || rel.startsWith('../') || path.posix.isAbsolute(rel)) return undefined;
  }
  rel = rel.replace(/\/+$/u, '');
  return rel === '.' ? '' : rel;
}

/** Whether a literal pattern's text matches a call's content, for a tool of match kind `kind`. */
export function matchLiteral(kind: string, literal: string, content: string, workspace?: string): boolean {
  if (kind !== 'path') return literal === content;
  const a = literalPath(literal, workspace);
  return a !== undefined && a === literalPath(content, workspace);
}
