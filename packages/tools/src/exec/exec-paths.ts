import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { ShellWord } from './shell-script.js';

/** Where a path argument lands once symlinks are resolved. */
export type PathPlace =
  | { where: 'inside'; real: string }
  | { where: 'outside'; real: string }
  /** The checks cannot know (an expansion, or `~` without a known home). */
  | { where: 'unknown' };

/** The real path of `target`: the realpath of its longest existing prefix, plus the rest. */
export function realPathOf(target: string): string {
  const absolute = path.resolve(target);
  const rest: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = realpathSync(current);
      return rest.length === 0 ? real : path.join(real, ...rest.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

/** Whether `real` is `root` or below it (both real, absolute paths). */
export function isWithin(root: string, real: string): boolean {
  const rel = path.relative(root, real);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
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
