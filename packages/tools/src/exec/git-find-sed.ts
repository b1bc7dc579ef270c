import { type CommandJudgement, hasFlag, isOption, judged, optionValue, positionals, wordValue as v } from './judgement.js';
import type { ShellWord } from './shell-script.js';

const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const FIND_WRITE = new Set(['-fprint', '-fprint0', '-fprintf', '-fls']);

/** `find`: read-only unless it runs commands (`-exec`…), deletes (`-delete`) or writes (`-fprint`…). */
export function findCommand(args: ShellWord[]): CommandJudgement {
  let start = 0;
  while (start < args.length && !/^[-(!]/u.test(v(args[start]))) start++;
  const roots = args.slice(0, start);
  const dot: ShellWord = { text: '.', value: '.', tilde: false, glob: false };
  const reads = roots.length > 0 ? roots : [dot];
  const inner: ShellWord[][] = [];
  const writes: ShellWord[] = [];
  let deletes = false;
  for (let i = start; i < args.length; i++) {
    const value = v(args[i]);
    if (args[i]?.value === undefined) return judged('other', 'find with an expanded expression', { reads, safety: 'find with an expansion in its expression' });
    if (value === '-delete') deletes = true;
    else if (FIND_WRITE.has(value)) {
      const target = args[i + 1];
      if (target) writes.push(target);
      i++;
    } else if (FIND_EXEC.has(value)) {
      const end = args.findIndex((word, j) => j > i && (v(word) === ';' || v(word) === '+'));
      inner.push(args.slice(i + 1, end === -1 ? undefined : end));
      i = end === -1 ? args.length : end;
    }
  }
  if (deletes) return judged('other', 'find -delete removes files', { reads, writes: reads, deleteRoots: reads, inner });
  if (inner.length > 0) return judged('other', 'find -exec runs commands', { reads, writes, inner });
  if (writes.length > 0) return judged('other', 'find -fprint writes a file', { reads, writes });
  return judged('read', 'find only reads', { reads });
}

/** `sed`: read-only unless `-i`, or its script writes (`w`, `W`, the `w` flag) or runs (`e`). */
export function sedCommand(args: ShellWord[]): CommandJudgement {
  const scripts = optionValue(args, ['-e', '--expression']);
  const scriptFiles = optionValue(args, ['-f', '--file']);
  let rest = positionals(args, new Set(['-e', '--expression', '-f', '--file', '-l', '--line-length']));
  if (scripts.length === 0 && scriptFiles.length === 0) {
    if (rest[0]) scripts.push(rest[0]);
    rest = rest.slice(1);
  }
  const reads = [...rest, ...scriptFiles];
  const inPlace = args.some((word) => /^-[A-Za-z]*[iI]/u.test(v(word)) && !v(word).startsWith('--')) || hasFlag(args, '', ['--in-place']);
  if (scripts.some((script) => script.value === undefined))
    return judged('other', 'sed with an expanded script', { reads, safety: 'the sed script comes from an expansion' });
  const effects = scripts.map((script) => sedScriptEffect(v(script)));
  if (effects.includes('exec')) return judged('other', 'sed script runs commands', { reads, safety: 'the sed script runs shell commands (e)' });
  if (inPlace) return judged('other', 'sed -i edits files in place', { reads, writes: rest });
  if (effects.includes('write') || scriptFiles.length > 0) return judged('other', 'sed script may write files', { reads });
  return judged('read', 'sed without -i only prints', { reads });
}

/** Whether a sed script only prints, writes files (`w`, `W`, `s///w`) or runs commands (`e`, `s///e`). */
function sedScriptEffect(script: string): 'print' | 'write' | 'exec' {
  let effect: 'print' | 'write' | 'exec' = 'print';
  for (const raw of script.split(/[;\n]/u)) {
    const command = raw.trim().replace(/^[0-9$,~+!/\\\s^.*[\]a-zA-Z]*?(?=[sywWeaicdDgGhHlnNpPqQrRtTbxz=:{}#]|$)/u, '');
    const head = command.trimStart()[0] ?? '';
    if (head === 'e') return 'exec';
    if (head === 'w' || head === 'W') effect = 'write';
    if (head === 's' || head === 'y') {
      const delim = command.trimStart()[1];
      if (delim === undefined) continue;
      const pieces = command.trimStart().slice(2).split(delim);
      const flags = pieces[2] ?? '';
      if (/e/u.test(flags)) return 'exec';
      if (/w/u.test(flags)) effect = 'write';
    }
  }
  // A script too odd for the split above is judged by its letters.
  if (effect === 'print' && /(^|[;\n}\s/0-9$])[wWe](\s|$)/u.test(script)) return 'write';
  return effect;
}

const GIT_READ = new Set(
  'status log diff show rev-parse ls-files ls-tree blame describe shortlog cat-file grep whatchanged name-rev merge-base count-objects for-each-ref show-ref version help rev-list diff-tree diff-files diff-index annotate cherry'.split(
    ' ',
  ),
);
const GIT_GLOBAL_VALUED = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env']);

/** `git`: the read subcommands are read-only (no `--output`); `config`, `-c core.*` and `-c alias.*` are safety asks. */
export function gitCommand(args: ShellWord[]): CommandJudgement {
  const reads: ShellWord[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const word = args[i] as ShellWord;
    const value = v(word);
    if (word.value === undefined) return judged('other', 'git with an expanded option', { safety: 'a git option comes from an expansion' });
    if (!isOption(word)) break;
    const [flag = '', inline] =
      value.includes('=') && value.startsWith('--') ? [value.slice(0, value.indexOf('=')), value.slice(value.indexOf('=') + 1)] : [value];
    if (!GIT_GLOBAL_VALUED.has(flag)) continue;
    const arg: ShellWord | undefined = inline !== undefined ? { ...word, value: inline, tilde: false } : args[++i];
    if (!arg) break;
    if (flag === '-C' || flag === '--git-dir' || flag === '--work-tree') reads.push(arg);
    if (flag === '-c' || flag === '--config-env') {
      if (arg.value === undefined || /^(core|alias|include|includeif|filter|diff|merge|credential|gpg|sequence|uploadpack|receive)\./iu.test(arg.value)) {
        return judged('other', 'git -c', { reads, safety: `git -c ${arg.value ?? arg.text} can make git run commands` });
      }
    }
  }
  const sub = v(args[i]);
  const rest = args.slice(i + 1);
  if (sub === '') return judged('read', 'git without a subcommand', { reads });
  if (sub === 'config') return judged('other', 'git config', { reads, safety: 'git config can make git run commands' });
  if (hasFlag(rest, '', ['--output'])) {
    const outputs = optionValue(rest, ['--output']);
    // An abbreviated `--out=F` (git accepts it) is a write the checks cannot place.
    return outputs.length > 0
      ? judged('other', `git ${sub} --output writes a file`, { reads, writes: outputs })
      : judged('other', `git ${sub} --output writes a file`, { reads, safety: `git ${sub} writes a file given in a form the checks cannot place (--output)` });
  }
  if (sub === 'grep' && rest.some((word) => /^(-O|--open-files-in-pager)/u.test(v(word)))) return judged('other', 'git grep -O runs a pager', { reads });
  if (sub === 'diff' && rest.some((word) => v(word) === '--no-index'))
    return judged('read', 'git diff --no-index reads files', { reads: [...reads, ...positionals(rest)] });
  if (GIT_READ.has(sub)) return judged('read', `git ${sub} only reads`, { reads });
  const positional = positionals(
    rest,
    new Set(['-b', '--branch', '-o', '--origin', '--template', '--separate-git-dir', '--depth', '-c', '--config', '--reference', '-B']),
  );
  // Where git itself writes a new repository or worktree: held to the workspace like any write.
  if (sub === 'init' || sub === 'clone' || (sub === 'worktree' && v(positional[0]) === 'add') || sub === 'archive') {
    const writes =
      sub === 'init'
        ? positional.slice(0, 1)
        : sub === 'clone'
          ? positional.slice(1, 2)
          : sub === 'archive'
            ? optionValue(rest, ['-o', '--output'])
            : positional.slice(1, 2);
    return judged('other', `git ${sub} writes a repository`, { reads, writes });
  }
  if (
    sub === 'branch' &&
    (positional.length === 0 || rest.some((word) => /^(--list|-l)$/u.test(v(word)))) &&
    !rest.some((word) => /^-[dDmMcC]$|^--(delete|move|copy|set-upstream-to|unset-upstream|edit-description)/u.test(v(word)))
  ) {
    return judged('read', 'git branch lists', { reads });
  }
  if (sub === 'tag' && (positional.length === 0 || rest.some((word) => /^(--list|-l)$/u.test(v(word)))) && !rest.some((word) => /^-[dasuf]$/u.test(v(word))))
    return judged('read', 'git tag lists', { reads });
  if (sub === 'remote' && (rest.length === 0 || rest.every((word) => /^(-v|--verbose)$/u.test(v(word))))) return judged('read', 'git remote lists', { reads });
  if (sub === 'stash' && (v(rest[0]) === 'list' || v(rest[0]) === 'show')) return judged('read', `git stash ${v(rest[0])} only reads`, { reads });
  if (sub === 'reflog' && (rest.length === 0 || v(rest[0]) === 'show')) return judged('read', 'git reflog only reads', { reads });
  return judged('other', `git ${sub} changes the repository or talks to a remote`, { reads });
}
