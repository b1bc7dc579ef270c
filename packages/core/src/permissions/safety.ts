import path from 'node:path';
import { toWorkspaceRelative } from './path-glob.js';
import { SHELL_RC_FILES } from '@switchboard/agent';

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

// Directories whose contents run code or hold the gateway's state (any depth, any case).
const PROTECTED_DIRS: ReadonlyArray<[string, string]> = [
  ['.git', 'git metadata (hooks and config run code)'],
  ['.switchboard', "the gateway's own state"],
  ['.ssh', 'SSH keys and configuration'],
];

// Files that a shell, git or direnv runs or obeys on their own (the sandbox mounts the same list read-only).
const PROTECTED_FILES: ReadonlySet<string> = new Set(SHELL_RC_FILES);

// Directory sequences (as path segments) whose contents are shell or git configuration.
const PROTECTED_SUBPATHS: ReadonlyArray<readonly string[]> = [
  ['.config', 'fish'],
  ['.config', 'git'],
];

/**
 * Why a write to `p` is sensitive, or `undefined` when it is not. Checks, on the lexical path
 * (placed in the workspace when it is inside; `..` folded; case-insensitive): any `.git/`,
 * `.switchboard/` or `.ssh/` directory; shell rc and profile files (`.bashrc`, `.zshrc`,
 * `.profile`, …), `.envrc`, `.gitconfig`, `.gitmodules`; `.config/fish/` and `.config/git/`;
 * and the gateway's config file, database and `extraPaths`.
 */
export function protectedPathReason(p: string, workspace: string | undefined, opts: SafetyOptions = {}): string | undefined {
  const abs = workspace === undefined ? undefined : path.posix.resolve(toPosix(workspace), toPosix(p));
  for (const [file, label] of ownFiles(opts)) {
    if (abs !== undefined && (abs === file || abs.startsWith(`${file}/`))) return label;
  }
  const rel = toWorkspaceRelative(p, workspace);
  const lexical = rel ?? abs ?? path.posix.normalize(toPosix(p));
  const segments = lexical
    .toLowerCase()
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  for (const [dir, label] of PROTECTED_DIRS) {
    if (segments.includes(dir)) return `${dir}/ holds ${label}`;
  }
  const base = segments[segments.length - 1];
  if (base !== undefined && PROTECTED_FILES.has(base)) return `${base} is run or read by the shell or git on its own`;
  for (const sub of PROTECTED_SUBPATHS) {
    for (let i = 0; i + sub.length <= segments.length; i++) {
      if (sub.every((s, j) => segments[i + j] === s)) return `${sub.join('/')}/ holds shell or git configuration`;
    }
  }
  return undefined;
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
