/**
 * The host-facing half of the sandbox: which system folders exist, the protected workspace entries
 * (created when missing so they can be bound read-only), workspace ownership for the sandbox group,
 * and the uid allocator. Everything here takes resolved values; nothing reads the environment.
 */
import { constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROTECTED_DIRS, PROTECTED_FILES, type SystemEntry } from './bwrap-args.js';

/** Top-level system entries the sandbox mirrors when they exist on the host. */
export const SYSTEM_CANDIDATES: readonly string[] = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

function errno(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/** Describes which of {@link SYSTEM_CANDIDATES} exist (directories are bound, symlinks recreated). */
export async function describeSystemLayout(candidates: readonly string[] = SYSTEM_CANDIDATES): Promise<SystemEntry[]> {
  const out: SystemEntry[] = [];
  for (const candidate of candidates) {
    try {
      const info = await lstat(candidate);
      if (info.isSymbolicLink()) out.push({ path: candidate, kind: 'symlink', target: await readlink(candidate) });
      else if (info.isDirectory()) out.push({ path: candidate, kind: 'dir' });
    } catch (error) {
      if (errno(error) !== 'ENOENT') throw error;
    }
  }
  return out;
}

/** Whether a protected entry exists (a symlink is refused: it could point the read-only bind elsewhere). */
async function existingEntry(absolute: string, relative: string): Promise<boolean> {
  try {
    if ((await lstat(absolute)).isSymbolicLink()) throw new Error(`protected workspace entry is a symlink: ${relative}`);
    return true;
  } catch (error) {
    if (errno(error) === 'ENOENT') return false;
    throw error;
  }
}

/** The workspace entries {@link prepareProtectedPaths} found or created (absolute paths). */
export interface ProtectedPaths {
  /** Bound read-only on top of the workspace. */
  readOnly: string[];
  /** Bound read-write onto themselves first, so they cannot be renamed away (`.git`). */
  pinned: string[];
}

/**
 * Makes sure every protected entry of the workspace exists so it can be bound read-only, and returns
 * their absolute paths (plus `.git`, pinned). Missing `AGENTS.md`, rc files and `.switchboard/` are created empty (owned by
 * the gateway's uid, not writable by the sandbox group); `.git/hooks` and `.git/config` are handled
 * only when `.git` is a directory (a missing `.git` is not invented). A symlinked entry is refused.
 */
export async function prepareProtectedPaths(workspace: string): Promise<ProtectedPaths> {
  const out: string[] = [];
  let gitDir = false;
  try {
    gitDir = (await lstat(path.join(workspace, '.git'))).isDirectory();
  } catch (error) {
    if (errno(error) !== 'ENOENT') throw error;
  }
  const ensure = async (relative: string, kind: 'dir' | 'file') => {
    if (relative.startsWith('.git/') && !gitDir) return;
    const absolute = path.join(workspace, relative);
    if (!(await existingEntry(absolute, relative))) {
      try {
        if (kind === 'dir') await mkdir(absolute, { recursive: true, mode: 0o755 });
        else await writeFile(absolute, '', { flag: 'wx', mode: 0o644 });
      } catch (error) {
        // A concurrent run created it first; it must still not be a symlink.
        if (errno(error) !== 'EEXIST' || !(await existingEntry(absolute, relative))) throw error;
      }
    }
    out.push(absolute);
  };
  for (const dir of PROTECTED_DIRS) await ensure(dir, 'dir');
  for (const file of PROTECTED_FILES) await ensure(file, 'file');
  return { readOnly: out, pinned: gitDir ? [path.join(workspace, '.git')] : [] };
}

/** Opens `target` without following a symlink (and without blocking on a FIFO), for fchown/fchmod. */
async function openNoFollow(target: string, directory: boolean): Promise<FileHandle> {
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (directory ? constants.O_DIRECTORY : 0);
  try {
    return await open(target, flags);
  } catch (error) {
    const code = errno(error);
    // O_NOFOLLOW fails with ELOOP on a symlink, or ENOTDIR when O_DIRECTORY is set too.
    if (code === 'ELOOP' || (code === 'ENOTDIR' && (await lstat(target)).isSymbolicLink())) {
      throw new Error(`refusing to change the ownership of a symlink: ${target}`);
    }
    throw error;
  }
}

/**
 * Gives `target` (a file or folder the file tools created in a workspace) the sandbox group with
 * group read/write (and, for folders, group search plus setgid so new entries inherit the group),
 * so the sandboxed shell, running as a uid of that group, can read and change it. The owner and
 * the other bits are kept. A symlink is refused (never followed); so is anything but a regular
 * file or a folder.
 */
export async function grantSandboxGroup(target: string, gid: number): Promise<void> {
  const handle = await openNoFollow(target, false);
  try {
    const info = await handle.stat();
    if (!info.isFile() && !info.isDirectory()) throw new Error(`refusing to change the ownership of a special file: ${target}`);
    await handle.chown(-1, gid);
    const mode = info.mode & 0o7777;
    await handle.chmod(info.isDirectory() ? mode | 0o2070 : mode | 0o060);
  } finally {
    await handle.close();
  }
}

/**
 * Readies the workspace root for a sandboxed run as a uid of group `gid`: the root folder gets the
 * group, group read/write/search and setgid (so what a run creates stays in the group). Only the
 * root itself: its parents and its entries are never touched, and a symlinked root is refused.
 */
export async function prepareWorkspaceForSandbox(workspace: string, gid: number): Promise<void> {
  const handle = await openNoFollow(workspace, true);
  try {
    const info = await handle.stat();
    const mode = info.mode & 0o7777;
    if (info.gid !== gid) await handle.chown(-1, gid);
    // chown clears setgid on some systems: always set the mode after it.
    if (info.gid !== gid || (mode & 0o2070) !== 0o2070) await handle.chmod(mode | 0o2070);
  } finally {
    await handle.close();
  }
}

/** Hands out one uid per concurrent run from an inclusive range; `acquire` returns undefined when all are taken. */
export class UidAllocator {
  private readonly inUse = new Set<number>();
  constructor(
    readonly first: number,
    readonly last: number,
  ) {
    if (!Number.isInteger(first) || !Number.isInteger(last) || first <= 0 || last < first) throw new Error(`bad sandbox uid range ${first}-${last}`);
  }
  /** A free uid, marked in use, or undefined. */
  acquire(): number | undefined {
    for (let uid = this.first; uid <= this.last; uid++) {
      if (!this.inUse.has(uid)) {
        this.inUse.add(uid);
        return uid;
      }
    }
    return undefined;
  }
  /** Returns a uid to the pool. */
  release(uid: number): void {
    this.inUse.delete(uid);
  }
  /** Uids currently handed out. */
  get busy(): number {
    return this.inUse.size;
  }
}
