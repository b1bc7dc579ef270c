import path from 'node:path';
import { toWorkspaceRelative } from './path-glob.js';
import { protectedWorkspacePathReason } from '@switchboard/agent';

/** What the safety checks protect beyond the built-in list. */
export interface SafetyOptions {
  /** Absolute path of the gateway's config file. */
  configFile?: string;
  /** Absolute path of the gateway's SQLite database (its `-wal`, `-shm` and `-journal` files too). */
  databaseFile?: string;
  /** More absolute paths (files or directories) to protect. */
  extraPaths?: readonly string[];
}

/** A safety check that fired: the call must be asked, whatever the mode. */
export interface SafetyHit {
  behavior: 'ask';
  reason: string;
}

/**
 * Why a write to `p` is sensitive, or `undefined` when it is not. Checks, on the lexical path
 * (placed in the workspace when it is inside; `..` folded; case-insensitive): any `.git/`,
 * `.switchboard/` or `.ssh/` directory; shell rc and profile files (`.bashrc`, `.zshrc`,
 * `.profile`, …), `.envrc`, `.gitconfig`, `.gitmodules`; `.config/fish/` and `.config/git/`;
 * and the gateway's config file, database and `extraPaths`. The workspace part is
 * `protectedWorkspacePathReason` (`@switchboard/agent`), which the exec checks share.
 */
export function protectedPathReason(p: string, workspace: string | undefined, opts: SafetyOptions = {}): string | undefined {
  const abs = workspace === undefined ? undefined : path.posix.resolve(toPosix(workspace), toPosix(p));
  for (const [file, label] of ownFiles(opts)) {
    if (abs !== undefined && (abs === file || abs.startsWith(`${file}/`))) return label;
  }
  const rel = toWorkspaceRelative(p, workspace);
  const lexical = rel ?? abs ?? path.posix.normalize(toPosix(p));
  return protectedWorkspacePathReason(lexical);
}

/**
 * The safety check of the pipeline: a non-read-only tool writing to a protected path (see
 * {@link protectedPathReason}) is always asked — no mode, rule allow or hook allow skips it.
 * `path` is the call's path rule content; tools without one are never affected.
 */
export function checkSafety(
  tool: { name: string; readOnly: boolean },
  filePath: string | undefined,
  workspace: string | undefined,
  opts: SafetyOptions = {},
): SafetyHit | undefined {
  if (tool.readOnly || filePath === undefined) return undefined;
  const why = protectedPathReason(filePath, workspace, opts);
  if (why === undefined) return undefined;
  return {
    behavior: 'ask',
    reason: `${tool.name} on ${filePath} always needs a person's approval, whatever the mode: ${why}`,
  };
}

function ownFiles(opts: SafetyOptions): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (opts.configFile) out.push([norm(opts.configFile), "it is the gateway's configuration file"]);
  if (opts.databaseFile) {
    const db = norm(opts.databaseFile);
    for (const suffix of ['', '-wal', '-shm', '-journal']) out.push([db + suffix, "it is the gateway's database"]);
  }
  for (const extra of opts.extraPaths ?? []) out.push([norm(extra), 'the operator protected it']);
  return out;
}

function norm(p: string): string {
  const n = path.posix.resolve(toPosix(p));
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

function toPosix(p: string): string {
  return p.replace(/\\/gu, '/');
}
