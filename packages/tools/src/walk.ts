import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { PathFilter } from '@switchboard/agent';
import { fsError, throwIfAborted } from './errors.js';
import { joinRelative } from './workspace-path.js';

/** One entry met while walking a directory. Symlinks are reported, never followed. */
export interface WalkEntry {
  /** Workspace-relative display path. */
  relative: string;
  /** Absolute path on disk (inside the workspace). */
  absolute: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  /** Set on a directory whose contents could not be read. */
  unreadable?: boolean;
}

/** Options for {@link walk}. */
export interface WalkOptions {
  recursive: boolean;
  signal: AbortSignal;
  /** Named in the message when the walk is stopped. */
  toolName: string;
  /**
   * The permission layer's filter (`ctx.pathFilter`): an entry it refuses is not yielded and is
   * counted in `withheld`. A withheld directory is still descended, each entry below checked on
   * its own.
   */
  filter?: PathFilter | undefined;
  /** Counts the entries `filter` withheld. */
  withheld?: { count: number };
}

/** The result line that says entries were left out by policy, without naming them; `undefined` when none were. */
export function withheldNote(withheld: { count: number }): string | undefined {
  const n = withheld.count;
  if (n === 0) return undefined;
  return `[${n} ${n === 1 ? 'entry' : 'entries'} withheld by the permission rules]`;
}

/**
 * Yields the entries under a directory in a stable order (names sorted by code point, each
 * directory's contents right after it). Checks the abort signal before every entry. Does not
 * descend into symlinked directories, so it never leaves the directory it started in. With
 * `opts.filter`, yields only the entries the permission layer lets the walk return.
 */
export async function* walk(absolute: string, relative: string, opts: WalkOptions): AsyncGenerator<WalkEntry> {
  throwIfAborted(opts.signal, opts.toolName);
  let entries: Dirent[];
  try {
    entries = await readSorted(absolute);
  } catch (err) {
    throw fsError(err, relative);
  }
  yield* walkEntries(absolute, relative, entries, opts);
}

async function* walkEntries(dir: string, dirRel: string, entries: Dirent[], opts: WalkOptions): AsyncGenerator<WalkEntry> {
  for (const d of entries) {
    throwIfAborted(opts.signal, opts.toolName);
    const entry: WalkEntry = { relative: joinRelative(dirRel, d.name), absolute: path.join(dir, d.name), type: typeOf(d) };
    const shown = await allowed(entry, opts);
    if (entry.type !== 'dir' || !opts.recursive) {
      if (shown) yield entry;
      continue;
    }
    let children: Dirent[];
    try {
      children = await readSorted(entry.absolute);
    } catch {
      if (shown) yield { ...entry, unreadable: true };
      continue;
    }
    if (shown) yield entry;
    yield* walkEntries(entry.absolute, entry.relative, children, opts);
  }
}

async function allowed(entry: WalkEntry, opts: WalkOptions): Promise<boolean> {
  if (!opts.filter) return true;
  const ok = await opts.filter(opts.toolName, entry).catch(() => false);
  if (!ok && opts.withheld) opts.withheld.count++;
  return ok;
}

async function readSorted(dir: string): Promise<Dirent[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function typeOf(d: Dirent): WalkEntry['type'] {
  if (d.isSymbolicLink()) return 'symlink';
  if (d.isDirectory()) return 'dir';
  if (d.isFile()) return 'file';
  return 'other';
}
