import { type CommandJudgement, type Handler, judged, optionValue, positionals, wordValue as v } from './judgement.js';
import type { ShellWord } from './shell-script.js';

/**
 * Commands that are `other` (the mode decides) but write files named in their arguments: those
 * paths are held to the workspace like an edit's (a write outside is denied). Not exhaustive —
 * the sandbox is the boundary; this catches the common spellings early with a clear reason.
 */
const OUTPUT_OPTIONS = new Map<string, { options: string[]; valued?: string[]; positional?: 'all' | 'after-first' | 'last' }>([
  ['curl', { options: ['-o', '--output', '-D', '--dump-header', '-c', '--cookie-jar', '--output-dir', '--trace', '--trace-ascii', '--libcurl'] }],
  ['wget', { options: ['-O', '--output-document', '-P', '--directory-prefix', '-o', '--output-file', '-a', '--append-output'] }],
  ['tar', { options: ['-C', '--directory', '-f', '--file'] }],
  ['unzip', { options: ['-d'] }],
  ['chmod', { options: ['--reference'], positional: 'after-first' }],
  ['chown', { options: ['--reference'], positional: 'after-first' }],
  ['chgrp', { options: ['--reference'], positional: 'after-first' }],
  ['truncate', { options: ['-r', '--reference'], valued: ['-s', '--size'], positional: 'all' }],
  ['ln', { options: ['-t', '--target-directory'], valued: ['-S', '--suffix'], positional: 'last' }],
  ['install', { options: ['-t', '--target-directory'], valued: ['-m', '--mode', '-o', '--owner', '-g', '--group'], positional: 'last' }],
]);

function writer(args: ShellWord[], name: string): CommandJudgement {
  const spec = OUTPUT_OPTIONS.get(name);
  if (!spec) return judged('other', `${name} runs a program`);
  const writes = optionValue(args, spec.options);
  const rest = positionals(args, new Set([...spec.options, ...(spec.valued ?? [])]));
  if (spec.positional === 'all') writes.push(...rest);
  if (spec.positional === 'after-first') writes.push(...rest.slice(1));
  if (spec.positional === 'last' && rest.length > 0) writes.push(rest[rest.length - 1] as ShellWord);
  return judged('other', `${name} writes the files it names`, { writes });
}

function dd(args: ShellWord[]): CommandJudgement {
  const writes: ShellWord[] = [];
  const reads: ShellWord[] = [];
  for (const word of args) {
    const value = v(word);
    if (word.value === undefined) return judged('other', 'dd with an expanded operand', { safety: 'a dd operand comes from an expansion' });
    if (value.startsWith('of=')) writes.push({ ...word, value: value.slice(3), tilde: false });
    if (value.startsWith('if=')) reads.push({ ...word, value: value.slice(3), tilde: false });
  }
  return judged('other', 'dd copies data', { reads, writes });
}

/** Handlers for the writers above, by command name. */
export const WRITER_HANDLERS: ReadonlyArray<[string, Handler]> = [...[...OUTPUT_OPTIONS.keys()].map((name): [string, Handler] => [name, writer]), ['dd', dd]];
