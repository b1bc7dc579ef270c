import { resolveRealPathSync } from '@switchboard/agent';
import path from 'node:path';
import { isWithin } from '../workspace-path.js';
import type { ShellWord } from './shell-script.js';

export { isWithin };

/** Where a path argument lands once symlinks are resolved. */
export type PathPlace =
  | { where: 'inside'; real: string }
  | { where: 'outside'; real: string }
  /** The checks cannot know (an expansion, or `~` without a known home). */
  | { where: 'unknown' };

/**
 * The real path of `target`, as the file tools resolve it (`resolveRealPathSync`: the deepest
 * existing ancestor, and a dangling symlink followed to where a write would land). A path that
 * cannot be resolved (a link loop, a permission error) is returned as it is, lexically.
 */
export function realPathOf(target: string): string {
  const absolute = path.resolve(target);
  try {
    return resolveRealPathSync(absolute).path;
  } catch {
    return absolute;
  }
}

/** Places a path word: resolved against `cwd`, `~` against `home`, symlinks followed. */
export function placeWord(word: ShellWord, cwd: string, workspace: string, home: string | undefined): PathPlace {
  const value = word.value;
  if (value === undefined) return { where: 'unknown' };
  let raw = value;
  if (word.tilde) {
    if (home === undefined || !(value === '~' || value.startsWith('~/'))) return { where: 'unknown' };
    raw = path.join(home, value.slice(1));
  }
  if (word.glob) {
    // A brace expansion can name several unrelated paths (`{/tmp,.}/x`), and `..` after a
    // pattern (`*/../../x`) climbs from folders the checks do not list: neither can be placed.
    if (/\{/u.test(word.text) || raw.split('/').some((segment, i, all) => segment === '..' && all.slice(0, i).some((s) => /[*?[]/u.test(s)))) {
      return { where: 'unknown' };
    }
    // Any other glob stays inside the folder its literal prefix names.
    raw = globBase(raw);
  }
  return placePath(path.resolve(cwd, raw), workspace);
}

/** Places an absolute path against the (real) workspace root. */
export function placePath(absolute: string, workspace: string): PathPlace {
  const real = realPathOf(absolute);
  return isWithin(workspace, real) ? { where: 'inside', real } : { where: 'outside', real };
}

function globBase(pattern: string): string {
  const segments = pattern.split('/');
  const literal: string[] = [];
  for (const segment of segments) {
    if (/[*?[{]/u.test(segment)) break;
    literal.push(segment);
  }
  const base = literal.join('/');
  return base === '' ? (pattern.startsWith('/') ? '/' : '.') : base;
}
