import { findCommand, gitCommand, sedCommand } from './git-find-sed.js';
import { WRITER_HANDLERS } from './writers.js';
import { type CommandJudgement, type Handler, hasFlag, isOption, judged, optionValue, positionals, wordValue as v } from './judgement.js';
import type { ShellWord } from './shell-script.js';

/** Commands that run a string or the rest of their line in a way the checks do not follow. */
const RUNS_UNSEEN = new Set(
  'watch su runuser script parallel ssh flock unshare nsenter chroot setpriv bwrap systemd-run at batch crontab setsid strace ltrace gdb expect tmux screen'.split(
    ' ',
  ),
);
/** Commands that print and take no paths. */
const PURE = new Set(
  'echo printf true false pwd whoami id date uname hostname basename dirname seq expr test [ which type printenv sleep tr yes nproc arch tty locale'.split(' '),
);
/** Commands that only read the files named by their positional arguments. */
const READERS = new Map<string, string[]>([
  ['ls', ['-I', '--ignore', '-w', '--width', '-T']],
  ['cat', []],
  ['head', ['-n', '-c']],
  ['tail', ['-n', '-c']],
  ['wc', []],
  ['nl', ['-b', '-s', '-w', '-v', '-i']],
  ['od', ['-A', '-t', '-N', '-j', '-w']],
  ['hexdump', ['-n', '-s', '-e']],
  ['stat', ['-c', '--format', '--printf']],
  ['du', ['-d', '--max-depth', '-B']],
  ['md5sum', []],
  ['sha1sum', []],
  ['sha256sum', []],
  ['sha512sum', []],
  ['cksum', []],
  ['strings', ['-n']],
  ['tac', []],
  ['rev', []],
  ['fold', ['-w']],
  ['column', ['-s', '-t', '-c']],
  ['diff', ['-U', '-C', '--label']],
  ['cmp', ['-n', '-i']],
  ['comm', []],
  ['cut', ['-d', '-f', '-c', '-b']],
  ['realpath', []],
  ['readlink', []],
  ['[[', []],
]);
const EDITS = new Set(['mkdir', 'touch', 'cp', 'mv', 'rm', 'rmdir']);
/** Options of the edit commands that take a value (so the value is not taken for a path). */
const EDIT_VALUED = new Map<string, string[]>([
  ['mkdir', ['-m', '--mode', '-Z', '--context']],
  ['touch', ['-r', '--reference', '-d', '--date', '-t']],
  ['cp', ['-t', '--target-directory', '-S', '--suffix']],
  ['mv', ['-t', '--target-directory', '-S', '--suffix']],
]);
/** Shells and interpreters: what reaches their standard input or `-c` is a program the checks cannot judge. */
export const INTERPRETERS = new Set(
  'sh bash zsh dash ksh mksh fish csh tcsh ash busybox python python2 python3 node nodejs deno bun perl ruby php lua luajit tclsh Rscript osascript'.split(' '),
);
const SHELLS = new Set('sh bash zsh dash ksh mksh fish csh tcsh ash'.split(' '));
const WRAPPERS = new Map<string, string[]>([
  ['env', ['-u', '--unset', '-C', '--chdir', '-S', '--split-string']],
  ['command', []],
  ['builtin', []],
  ['nohup', []],
  ['time', ['-f', '--format', '-o', '--output']],
  ['nice', ['-n', '--adjustment']],
  ['exec', ['-a']],
  ['stdbuf', ['-i', '-o', '-e']],
  ['sudo', ['-u', '--user', '-g', '--group', '-C', '-h', '--host', '-p', '--prompt', '-r', '-t', '-D', '--chdir']],
  ['doas', ['-u', '-C']],
]);

export type { CommandJudgement };

/** Judges one simple command from its words (`words[0]` is the command name). */
export function judgeWords(words: ShellWord[]): CommandJudgement {
  const first = words[0];
  if (!first) return judged('other', 'assignments or redirections only');
  if (first.value === undefined)
    return judged('other', 'the command name is an expansion', { safety: 'the command name comes from an expansion or substitution' });
  const name = first.value;
  const args = words.slice(1);
  const handler = HANDLERS.get(name);
  if (handler) return handler(args, name);
  if (RUNS_UNSEEN.has(name)) return judged('other', `${name} runs a command`, { safety: `${name} runs a command the checks cannot judge` });
  if (PURE.has(name)) return judged('read', `${name} only prints`);
  const readerOptions = READERS.get(name);
  if (readerOptions) return judged('read', `${name} only reads`, { reads: positionals(args, new Set(readerOptions)) });
  if (INTERPRETERS.has(name)) {
    if (SHELLS.has(name) && hasFlag(args, 'c')) return judged('other', `${name} -c`, { safety: `${name} -c runs a string the checks cannot judge` });
    if (/^(python[0-9.]*|node|nodejs|perl|ruby|php|bun|deno)$/u.test(name) && hasFlag(args, 'ce', ['--eval']))
      return judged('other', `${name} runs inline code`);
    return judged('other', `${name} runs a program`);
  }
  return judged('other', `${name} is not a known read-only command or workspace edit`);
}

function wrapper(args: ShellWord[], name: string): CommandJudgement {
  if (name === 'command' && hasFlag(args, 'vV')) return judged('read', 'command -v only looks up');
  const valued = new Set(WRAPPERS.get(name) ?? []);
  let i = 0;
  for (; i < args.length; i++) {
    const value = v(args[i]);
    if (value === '--') {
      i++;
      break;
    }
    if (name === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/u.test(value)) continue;
    if (!isOption(args[i] as ShellWord)) break;
    if (valued.has(value)) i++;
  }
  const rest = args.slice(i);
  if (name === 'env' && hasFlag(args.slice(0, i), 'S', ['--split-string']))
    return judged('other', 'env -S', { safety: 'env -S runs a string the checks cannot judge' });
  if (rest.length === 0) return judged(name === 'env' ? 'read' : 'other', `${name} without a command`);
  if (name === 'env' && hasFlag(args.slice(0, i), 'C', ['--chdir']))
    return judged('other', 'env --chdir', { safety: 'env --chdir moves the command out of view' });
  return judged('other', `${name} runs another command`, { inner: [rest] });
}

function timeout(args: ShellWord[]): CommandJudgement {
  // The duration, then the command with its own options intact (`timeout 5 rm -rf .` runs `rm -rf .`).
  const inner = commandAfterOptions(args, new Set(['-s', '--signal', '-k', '--kill-after'])).slice(1);
  return inner.length === 0 ? judged('other', 'timeout without a command') : judged('other', 'timeout runs another command', { inner: [inner] });
}

function xargs(args: ShellWord[]): CommandJudgement {
  const rest = commandAfterOptions(args, new Set(['-I', '-n', '-L', '-P', '-d', '-E', '-s', '-a']));
  const inner = v(rest[0]);
  if (rest.length > 0 && (INTERPRETERS.has(inner) || inner === 'eval' || rest[0]?.value === undefined)) {
    return judged('other', 'xargs into an interpreter', { safety: 'xargs feeds its input to a shell or interpreter' });
  }
  if (EDITS.has(inner) || inner === 'find' || inner === 'sed' || inner === 'tee') {
    return judged('other', `xargs ${inner}`, { safety: `xargs gives ${inner} paths the checks cannot see` });
  }
  return judged('other', 'xargs runs a command on arguments from its input', rest.length > 0 ? { inner: [rest] } : {});
}

/** The words after a wrapper's own leading options (`valued` take a value; `--` ends them): its operands and the command it runs, as written. */
function commandAfterOptions(args: ShellWord[], valued: ReadonlySet<string>): ShellWord[] {
  let i = 0;
  for (; i < args.length; i++) {
    const value = v(args[i]);
    if (value === '--') return args.slice(i + 1);
    if (!isOption(args[i] as ShellWord)) break;
    if (valued.has(value)) i++;
  }
  return args.slice(i);
}

function edit(args: ShellWord[], name: string): CommandJudgement {
  const paths = positionals(args, new Set(EDIT_VALUED.get(name) ?? []));
  const targets = name === 'cp' || name === 'mv' ? optionValue(args, ['-t', '--target-directory']) : [];
  const references = name === 'touch' ? optionValue(args, ['-r', '--reference']) : [];
  if (name === 'rm' || name === 'rmdir') {
    const recursive = name === 'rm' && hasFlag(args, 'rR', ['--recursive']);
    return judged('edit', `${name} removes workspace files`, { writes: paths, removes: { targets: paths, recursive } });
  }
  if (name === 'cp') {
    const dest = targets.length > 0 ? targets : paths.slice(-1);
    const sources = targets.length > 0 ? paths : paths.slice(0, -1);
    return judged('edit', 'cp copies within the workspace', { reads: sources, writes: dest });
  }
  return judged('edit', `${name} edits workspace files`, { reads: references, writes: [...paths, ...targets] });
}

function cd(args: ShellWord[]): CommandJudgement {
  const rest = positionals(args);
  const target = rest[0];
  if (!target) return judged('read', 'cd', { cd: 'home' });
  if (target.value === '-') return judged('read', 'cd -', { cd: 'unknown' });
  return judged('read', 'cd', { cd: target });
}

function grep(args: ShellWord[], name: string): CommandJudgement {
  const valued = [
    '-e',
    '--regexp',
    '-f',
    '--file',
    '-m',
    '--max-count',
    '-A',
    '-B',
    '-C',
    '--include',
    '--exclude',
    '--exclude-dir',
    '-g',
    '--glob',
    '-t',
    '--type',
    '-T',
    '--type-not',
    '--pre',
    '-j',
    '--threads',
    '-M',
    '--max-columns',
    '--max-depth',
    '-d',
    '-D',
    '--color',
    '--colour',
    '-r',
    '--replace',
  ];
  const valuedSet = new Set(name === 'rg' ? valued : valued.filter((o) => o !== '-r'));
  if (name === 'rg' && args.some((a) => v(a) === '--pre' || v(a).startsWith('--pre='))) return judged('other', 'rg --pre runs a command');
  const explicit = args.some((a) => ['-e', '--regexp', '-f', '--file'].includes(v(a)) || /^--(regexp|file)=/u.test(v(a)));
  const rest = positionals(args, valuedSet);
  const patternFiles = optionValue(args, ['-f', '--file']);
  return judged('read', `${name} only reads`, { reads: [...(explicit ? rest : rest.slice(1)), ...patternFiles] });
}

function jq(args: ShellWord[]): CommandJudgement {
  const rest = positionals(args, new Set(['--arg', '--argjson', '--slurpfile', '--rawfile', '--indent', '-L']));
  return judged('read', 'jq only reads', { reads: rest.slice(1) });
}

function sort(args: ShellWord[]): CommandJudgement {
  const outputs = optionValue(args, ['-o', '--output']);
  const reads = positionals(
    args,
    new Set(['-k', '--key', '-t', '--field-separator', '-S', '--buffer-size', '-T', '--temporary-directory', '--parallel', '-o', '--output']),
  );
  // `--compress-program=sh` pipes sort's temporary data into a program: any command at all.
  if (hasFlag(args, '', ['--compress-program']))
    return judged('other', 'sort --compress-program runs a program', { reads, safety: 'sort --compress-program runs a program the checks cannot judge' });
  if (outputs.length > 0) return judged('other', 'sort -o writes a file', { reads, writes: outputs });
  // A bundled `-uo F`, an abbreviated `--outp=F`, or temporary files in `-T DIR`: writes the checks cannot place.
  if (hasFlag(args, 'oT', ['--output', '--temporary-directory']))
    return judged('other', 'sort writes files', { reads, safety: 'sort writes a file given in a form the checks cannot place (-o, -T)' });
  return judged('read', 'sort only reads', { reads });
}

/** `xxd IN OUT` writes OUT; `xxd -r` turns a dump back into bytes. */
function xxd(args: ShellWord[]): CommandJudgement {
  const rest = positionals(args, new Set(['-c', '-l', '-s', '-g', '-o', '-n', '-C', '-cols', '-len', '-seek', '-groupsize']));
  if (rest.length > 1) return judged('other', 'xxd with an output file writes it', { reads: rest.slice(0, 1), writes: rest.slice(1, 2) });
  return judged(hasFlag(args, 'r') ? 'other' : 'read', hasFlag(args, 'r') ? 'xxd -r writes bytes' : 'xxd only reads', { reads: rest });
}

/** `tree -o FILE` writes FILE; `tree -R` (with -H) writes an index file into every folder. */
function tree(args: ShellWord[]): CommandJudgement {
  const reads = positionals(args, new Set(['-L', '-P', '-I', '-o', '-H', '-T', '--charset', '--filelimit', '--timefmt']));
  const outputs = optionValue(args, ['-o']);
  if (outputs.length > 0) return judged('other', 'tree -o writes a file', { reads, writes: outputs });
  if (hasFlag(args, 'oR', ['--output'])) return judged('other', 'tree writes files', { reads, safety: 'tree writes files (-o, -R) the checks cannot place' });
  return judged('read', 'tree only reads', { reads });
}

/** `file -C` compiles a magic file (writes `*.mgc`). */
function fileCommand(args: ShellWord[]): CommandJudgement {
  const reads = positionals(args, new Set(['-m', '--magic-file', '-F', '--separator', '-P', '--parameter', '-e', '--exclude']));
  if (hasFlag(args, 'C', ['--compile'])) return judged('other', 'file -C writes a compiled magic file', { reads });
  return judged('read', 'file only reads', { reads });
}

function uniq(args: ShellWord[]): CommandJudgement {
  const rest = positionals(args, new Set(['-f', '-s', '-w', '--skip-fields', '--skip-chars', '--check-chars']));
  return rest.length > 1
    ? judged('other', 'uniq with an output file writes it', { reads: rest.slice(0, 1), writes: rest.slice(1) })
    : judged('read', 'uniq only reads', { reads: rest });
}

function tee(args: ShellWord[]): CommandJudgement {
  return judged('other', 'tee writes files', { writes: positionals(args) });
}

const HANDLERS = new Map<string, Handler>([
  ['eval', () => judged('other', 'eval', { safety: 'eval runs a string the checks cannot judge' })],
  ['trap', () => judged('other', 'trap', { safety: 'trap runs a string the checks cannot judge' })],
  ['source', () => judged('other', 'source', { safety: 'source runs a file the checks cannot judge' })],
  ['.', () => judged('other', '.', { safety: '. runs a file the checks cannot judge' })],
  ['cd', cd],
  ['xxd', xxd],
  ['tree', tree],
  ['file', fileCommand],
  ['grep', grep],
  ['egrep', grep],
  ['fgrep', grep],
  ['rg', grep],
  ['jq', jq],
  ['sort', sort],
  ['uniq', uniq],
  ['tee', tee],
  ['timeout', timeout],
  ['xargs', xargs],
  ['find', findCommand],
  ['sed', sedCommand],
  ['git', gitCommand],
  ...WRITER_HANDLERS,
  ...[...WRAPPERS.keys()].map((name): [string, Handler] => [name, wrapper]),
  ...[...EDITS].map((name): [string, Handler] => [name, edit]),
]);
