import { realpath, stat } from 'node:fs/promises';
import { isSwbError, resolveRealPath, SwbErrorCode } from '@switchboard/agent';
import path from 'node:path';
import { FileToolError, PathEscapeError, fsError, hardLinkError } from './errors.js';

/** A user path resolved inside the workspace. */
export interface WorkspacePath {
  /** Real absolute path to operate on (every symlink resolved); always inside `root`. */
  real: string;
  /** The path as the model named it, relative to the workspace, `/`-separated (`.` for the root). Safe to show. */
  relative: string;
  /** Real path of the workspace directory. */
  root: string;
  /** Whether the target exists (false only for write targets). */
  exists: boolean;
}

/** Options for {@link resolveInWorkspace}. */
export interface ResolveOptions {
  /** Allow a target that does not exist yet (its existing ancestors are still resolved and checked). */
  forWrite?: boolean;
}

/**
 * Resolves `userPath` (relative to `workspace`, or absolute inside it) to a real path that is
 * guaranteed to be inside the workspace's real path. Refuses `..` escapes, absolute paths
 * elsewhere, NUL bytes and symlinks (anywhere along the path) that lead outside, with a
 * {@link PathEscapeError}. A missing target is refused with `SwbErrorCode.FileNotFound` unless
 * `forWrite` is set.
 */
export async function resolveInWorkspace(workspace: string, userPath: string, opts: ResolveOptions = {}): Promise<WorkspacePath> {
  if (userPath.includes('\0')) throw new PathEscapeError('path refused because it contains a NUL byte');
  let root: string;
  try {
    root = await realpath(workspace);
  } catch (err) {
    throw new FileToolError(SwbErrorCode.Workspace, 'the workspace directory is missing or unreadable', { cause: err });
  }
  const rel = relativeInside(workspace, root, userPath);
  if (rel === undefined) throw new PathEscapeError('path refused');
  const relative = toDisplay(rel);
  let resolved: { path: string; exists: boolean };
  try {
    resolved = await resolveRealPath(path.join(root, rel));
  } catch (err) {
    throw fsError(err, relative);
  }
  if (!isWithin(root, resolved.path)) {
    throw new PathEscapeError(`path refused because ${relative} leads through a symbolic link to outside the workspace`);
  }
  if (!resolved.exists && !opts.forWrite) {
    throw new FileToolError(SwbErrorCode.FileNotFound, `${relative} does not exist`);
  }
  return { real: resolved.path, relative, root, exists: resolved.exists };
}

/**
 * Resolves a path a read-only tool may open: inside the workspace as {@link resolveInWorkspace}
 * does, or — only for an absolute path lexically inside one of `readRoots` (a loaded skill's
 * folder, `ToolContext.skills`) — a real path inside that root's real path (a symlink in the folder
 * that leads out is refused). Nothing else outside the workspace is ever opened; writers never
 * call this.
 */
export async function resolveForRead(workspace: string, userPath: string, readRoots: readonly string[] = []): Promise<WorkspacePath> {
  const root = path.isAbsolute(userPath) && !userPath.includes('\0') ? readRoots.find((r) => isWithin(r, path.resolve(userPath))) : undefined;
  if (root === undefined) return resolveInWorkspace(workspace, userPath);
  const shown = path.resolve(userPath);
  let resolved: { path: string; exists: boolean };
  let realRoot: string;
  try {
    realRoot = await realpath(root);
    resolved = await resolveRealPath(shown);
  } catch (err) {
    throw fsError(err, shown);
  }
  if (!isWithin(realRoot, resolved.path))
    throw new PathEscapeError(`path refused because ${shown} leads through a symbolic link to outside the skill's folder`);
  if (!resolved.exists) throw new FileToolError(SwbErrorCode.FileNotFound, `${shown} does not exist`);
  return { real: resolved.path, relative: shown, root: realRoot, exists: true };
}

/** {@link confinedPath} for a reader: a loaded skill's folder is allowed too (see {@link resolveForRead}). */
export function confinedReadPath<I>(pathOf: (input: I) => string) {
  return async (input: I, ctx: { workspace: string; skills?: { readRoots(): readonly string[] } }): Promise<{ ok: true } | { ok: false; message: string }> => {
    try {
      await resolveForRead(ctx.workspace, pathOf(input), ctx.skills?.readRoots() ?? []);
      return { ok: true };
    } catch (err) {
      if (isSwbError(err, SwbErrorCode.PathEscape)) return { ok: false, message: err.message };
      return { ok: true };
    }
  };
}

/** Joins a workspace-relative display path and a child name. */
export function joinRelative(parent: string, name: string): string {
  return parent === '.' ? name : `${parent}/${name}`;
}

/** True when the absolute path `p` is `root` or lies under it (lexically). */
export function isWithin(root: string, p: string): boolean {
  return isInside(path.relative(root, p));
}

/**
 * Lexically normalises a user path for permission rules (`write_file(notes/**)`): drops `./`,
 * folds `a/../b`, uses `/`. Absolute paths stay absolute, since the workspace is not known here.
 */
export function normalizeUserPath(userPath: string): string {
  const n = path.normalize(userPath).split(path.sep).join('/');
  const trimmed = n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
  return trimmed === '' ? '.' : trimmed;
}

// The workspace-relative form of userPath, or undefined when it lies outside. Absolute paths may
// name the workspace as configured or by its real path.
function relativeInside(workspace: string, root: string, userPath: string): string | undefined {
  const lexical = path.resolve(workspace, userPath);
  const bases = path.isAbsolute(userPath) ? [path.resolve(workspace), root] : [path.resolve(workspace)];
  for (const base of bases) {
    const rel = path.relative(base, lexical);
    if (isInside(rel)) return rel;
  }
  return undefined;
}

function isInside(rel: string): boolean {
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function toDisplay(rel: string): string {
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

/**
 * A tool's `validateInput` that refuses paths leaving the workspace before any permission
 * question is asked: an escape is invalid input, not something a person should approve. With
 * `writes`, an existing file with more than one hard link is refused the same way (the write
 * itself checks again).
 */
export function confinedPath<I>(pathOf: (input: I) => string, forWrite = false, writes = forWrite) {
  return async (input: I, ctx: { workspace: string }): Promise<{ ok: true } | { ok: false; message: string }> => {
    try {
      const target = await resolveInWorkspace(ctx.workspace, pathOf(input), { forWrite });
      if (writes && target.exists) {
        const st = await stat(target.real);
        if (st.isFile() && st.nlink > 1) throw hardLinkError(target.relative, st.nlink);
      }
      return { ok: true };
    } catch (err) {
      if (isSwbError(err, SwbErrorCode.PathEscape) || isSwbError(err, SwbErrorCode.HardLink)) return { ok: false, message: err.message };
      // Anything else (a missing file, say) is the call's to report.
      return { ok: true };
    }
  };
}

/**
 * The shared facts of a read-only tool that works on a directory (`path`, default `.`): safe to
 * run in parallel, rules match the normalized path, escapes are refused as invalid input.
 */
export function readOnlyDirectoryTool<I extends { path?: string | undefined }>(maxResultChars: number) {
  return {
    readOnly: true,
    concurrencySafe: true,
    maxResultChars,
    ruleContent: (input: I) => normalizeUserPath(input.path ?? '.'),
    validateInput: confinedPath((input: I) => input.path ?? '.'),
  };
}
