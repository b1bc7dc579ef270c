import type { ShellWord } from './shell-script.js';

/**
 * What one simple command does, judged from its (quote-removed) words alone: its kind, the path
 * arguments it reads and writes, and anything the checks refuse to judge. Paths are placed
 * against the workspace later (see `exec-paths.ts`).
 */
export interface CommandJudgement {
  kind: 'read' | 'edit' | 'other';
  reason: string;
  reads: ShellWord[];
  writes: ShellWord[];
  /** `rm`/`rmdir` targets, and whether the removal is recursive. */
  removes?: { targets: ShellWord[]; recursive: boolean };
  /** `find … -delete` start folders. */
  deleteRoots?: ShellWord[];
  /** Set when the command cannot be judged: an ask with `source: "safety"`. */
  safety?: string;
  /** `cd`: the target word, or `home` for a bare `cd`, `unknown` for `cd -`. */
  cd?: ShellWord | 'home' | 'unknown';
  /** Commands this one runs (`find -exec`, `env X=1 cmd`, `timeout 5 cmd`). */
  inner?: ShellWord[][];
}

/** Judges a command from its arguments (the name is passed for shared handlers). */
export type Handler = (args: ShellWord[], name: string) => CommandJudgement;

/** A judgement with no paths unless `extra` names some. */
export const judged = (kind: CommandJudgement['kind'], reason: string, extra: Partial<CommandJudgement> = {}): CommandJudgement => ({
  kind,
  reason,
  reads: [],
  writes: [],
  ...extra,
});

/** A word's resolved value, or `''` when it is dynamic or absent. */
export const wordValue = (word: ShellWord | undefined): string => word?.value ?? '';
const v = wordValue;
/** Whether a word is an option (`-x`, `--x`), not `-` alone. */
export const isOption = (word: ShellWord): boolean => v(word).startsWith('-') && v(word) !== '-';

/** Positional arguments, skipping options (and the values of `valued` options) until `--`. */
export function positionals(args: ShellWord[], valued: ReadonlySet<string> = new Set()): ShellWord[] {
  const out: ShellWord[] = [];
  let options = true;
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as ShellWord;
    const value = v(word);
    if (options && value === '--') options = false;
    else if (options && word.value !== undefined && isOption(word)) {
      if (valued.has(value)) i++;
    } else out.push(word);
  }
  return out;
}

/** The values given to the named options (`-o F`, `-oF`, `--output=F`, `--output F`). */
export const optionValue = (args: ShellWord[], names: readonly string[]): ShellWord[] => {
  const out: ShellWord[] = [];
  args.forEach((word, i) => {
    const value = v(word);
    for (const name of names) {
      if (value === name && args[i + 1]) out.push(args[i + 1] as ShellWord);
      else if (name.startsWith('--') && value.startsWith(`${name}=`)) out.push({ ...word, value: value.slice(name.length + 1), tilde: false });
      else if (!name.startsWith('--') && value.startsWith(name) && value.length > name.length)
        out.push({ ...word, value: value.slice(name.length), tilde: false });
    }
  });
  return out;
};

/**
 * Whether a word names the long option `full` (`--output`), also as `--output=…` and as an
 * abbreviation GNU getopt and git accept (`--outp`, `--out=x`): any prefix counts, ambiguous or
 * not, so a check that looks for a dangerous option errs on the strict side.
 */
export const namesLongOption = (word: ShellWord, full: string): boolean => {
  const value = v(word);
  if (!value.startsWith('--') || value === '--' || !full.startsWith('--')) return false;
  const name = value.slice(2).split('=')[0] ?? '';
  return name.length > 0 && full.slice(2).startsWith(name);
};

/** Whether a short flag (also inside a group like `-rf`, or with its value attached) or a long option (abbreviations included) is present. */
export const hasFlag = (args: ShellWord[], short: string, long: readonly string[] = []): boolean =>
  args.some((word) => {
    const value = v(word);
    if (long.some((name) => namesLongOption(word, name))) return true;
    return (
      short !== '' &&
      /^-[A-Za-z]+/u.test(value) &&
      !value.startsWith('--') &&
      [...short].some((ch) =>
        value
          .slice(1)
          .replace(/[^A-Za-z].*$/u, '')
          .includes(ch),
      )
    );
  });
