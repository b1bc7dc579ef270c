import { protectedWorkspacePathReason } from '@switchboard/agent';
import path from 'node:path';
import { INTERPRETERS, judgeWords } from './command-kinds.js';
import { isWithin, placePath, placeWord, realPathOf } from './exec-paths.js';
import type { CommandJudgement } from './judgement.js';
import { commandRuleContent, ruleContentsOf } from './rule-contents.js';
import { loadShellParser, type ShellParser } from './shell-parser.js';
import type { ScriptStep, ShellWord, SimpleCommand } from './shell-script.js';

/** What the checks say about one call or one part. Strictness: deny > ask > allow. */
export type ExecOutcome = 'allow' | 'ask' | 'deny';

/** One simple command (or construct) of a call, judged on its own. */
export interface ExecPartResult {
  /** Its rule content: the words after quote removal joined with single spaces. */
  content: string;
  /** `read`: only reads inside the workspace; `edit`: mkdir/touch/cp/mv/rm (or a redirection) inside it; `other`: anything else. */
  kind: 'read' | 'edit' | 'other';
  outcome: ExecOutcome;
  reason: string;
}

/**
 * The checks' verdict on one `exec` command, before the permission mode decides.
 *
 * - `allow` means only "the checks have no objection": the mode and rules still decide (a
 *   non-read-only command still asks in `default` and is refused in `plan`).
 * - `ask` always carries `source: "safety"`: a construct the checks cannot judge, a parse
 *   failure, a path outside the workspace that is read, a dangerous removal, `git config`,
 *   an argument or redirection write to a protected workspace path (`protectedWorkspacePathReason`:
 *   any `.git/`, `.switchboard/`, `.ssh/`, the rc files, `.config/git/`, `.config/fish/`). No hook, classifier or allow rule may answer it; every mode asks.
 * - `deny`: a write outside the workspace, or `cd` out of it.
 *
 * `readOnly` is true only when every part is a `read` with outcome `allow`.
 */
export interface ExecCheckResult {
  outcome: ExecOutcome;
  readOnly: boolean;
  source?: 'safety';
  reason: string;
  parts: ExecPartResult[];
}

/** Where the command runs. */
export interface ExecCheckOptions {
  /** The workspace root (symlinks are resolved). */
  workspace: string;
  /** The working directory, default the workspace root. */
  cwd?: string;
  /** What `~` expands to; when absent, a `~` path counts as unknown (outside). */
  home?: string;
}

/** The loaded checks: both methods are synchronous once the grammar is loaded. */
export interface ExecChecks {
  analyze(command: string, options: ExecCheckOptions): ExecCheckResult;
  /** One rule content per simple command, for `exec(...)` rules; the whole line when it does not parse. */
  ruleContents(input: { command: string }): string[];
}

/** Loads the shell grammar once and returns the checks. */
export async function loadExecChecks(): Promise<ExecChecks> {
  const parser = await loadShellParser();
  return {
    analyze: (command, options) => analyzeWith(parser, command, options),
    ruleContents: (input) => ruleContentsOf(parser, input.command),
  };
}

/** Judges one command line (see {@link ExecCheckResult}); never throws. */
export async function analyzeCommand(command: string, options: ExecCheckOptions): Promise<ExecCheckResult> {
  try {
    return (await loadExecChecks()).analyze(command, options);
  } catch (err) {
    return safetyAsk(command, `the shell parser could not load: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const RANK: Readonly<Record<ExecOutcome, number>> = { allow: 0, ask: 1, deny: 2 };
const DEVICES = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/stdin', '/dev/zero', '/dev/fd/1', '/dev/fd/2', '/dev/fd/0']);
/** Assignments before a command that cannot change what it does beyond its output's language and look. */
const SAFE_ENV = /^(LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|FORCE_COLOR|COLUMNS|TERM|CLICOLOR|GREP_COLOR|GREP_COLORS)=/u;
const WRITE_OPS = new Set(['>', '>>', '>|', '&>', '&>>', '<>', '>&']);

function safetyAsk(command: string, reason: string, outcome: 'ask' | 'deny' = 'ask'): ExecCheckResult {
  return { outcome, readOnly: false, source: 'safety', reason, parts: [{ content: normalize(command), kind: 'other', outcome, reason }] };
}

const normalize = (text: string): string => text.trim().replace(/\s+/gu, ' ');

function analyzeWith(parser: ShellParser, command: string, options: ExecCheckOptions): ExecCheckResult {
  try {
    const steps = parser.parse(command);
    if (steps === undefined) return safetyAsk(command, 'the shell parser rejects this command');
    const judge = new PartJudge(options);
    if (!judge.cwdInside()) return safetyAsk(command, 'the working directory is outside the workspace', 'deny');
    const parts = judge.run(steps);
    if (parts.length === 0) return safetyAsk(command, 'no command to run');
    let worst = parts[0] as ExecPartResult;
    for (const part of parts) if (RANK[part.outcome] > RANK[worst.outcome]) worst = part;
    const readOnly = parts.every((part) => part.kind === 'read' && part.outcome === 'allow');
    const result: ExecCheckResult = {
      outcome: worst.outcome,
      readOnly,
      reason:
        worst.outcome === 'allow'
          ? readOnly
            ? 'every part only reads the workspace'
            : 'no objection; the permission mode decides'
          : `${worst.content}: ${worst.reason}`,
      parts,
    };
    if (worst.outcome !== 'allow') result.source = 'safety';
    return result;
  } catch (err) {
    return safetyAsk(command, `the checks failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Walks the steps in order, tracking the working directory through `cd`. */
class PartJudge {
  private readonly workspace: string;
  private readonly home: string | undefined;
  private cwd: string;
  private readonly stack: string[] = [];

  constructor(options: ExecCheckOptions) {
    this.workspace = realPathOf(options.workspace);
    this.home = options.home;
    this.cwd = realPathOf(path.resolve(this.workspace, options.cwd ?? '.'));
  }

  /** Whether the starting working directory is the workspace or below it. */
  cwdInside(): boolean {
    return isWithin(this.workspace, this.cwd);
  }

  run(steps: ScriptStep[]): ExecPartResult[] {
    const parts: ExecPartResult[] = [];
    for (const step of steps) {
      if (step.type === 'push') this.stack.push(this.cwd);
      else if (step.type === 'pop') this.cwd = this.stack.pop() ?? this.cwd;
      else if (step.type === 'unjudgeable')
        parts.push({ content: normalize(step.text), kind: 'other', outcome: 'ask', reason: `${step.reason} cannot be judged` });
      else if (step.type === 'test') parts.push({ content: normalize(step.text), kind: 'read', outcome: 'allow', reason: 'a test only reads' });
      else if (step.type === 'assignment') parts.push({ content: normalize(step.text), kind: 'other', outcome: 'allow', reason: 'sets shell variables' });
      else parts.push(...this.command(step.command));
    }
    return parts;
  }

  private command(command: SimpleCommand): ExecPartResult[] {
    const parts: ExecPartResult[] = [];
    const own = this.judgeCommand(command, command.words, parts);
    parts.unshift({ content: commandRuleContent(command), ...own });
    return parts;
  }

  private judgeCommand(command: SimpleCommand, words: ShellWord[], extra: ExecPartResult[]): Omit<ExecPartResult, 'content'> {
    const name = words[0]?.value ?? '';
    const base = name.includes('/') && /^\/(usr\/)?(local\/)?s?bin\/[^/]+$/u.test(name) ? path.basename(name) : name;
    const judgement = judgeWords(base === name ? words : [{ ...(words[0] as ShellWord), value: base }, ...words.slice(1)]);
    const verdicts: Array<Omit<ExecPartResult, 'content'>> = [];
    let kind = judgement.kind;
    const readsProgram = command.stdinFed || command.redirects.some((redirect) => redirect.kind === 'file' && (redirect.op === '<' || redirect.op === '<>'));
    if (readsProgram && (INTERPRETERS.has(base) || base === 'xargs' || base === 'eval')) {
      verdicts.push({ kind: 'other', outcome: 'ask', reason: `input fed into ${base} cannot be judged` });
    }
    // `PATH=… ls`, `LD_PRELOAD=… cat`: an environment the checks do not know makes any command "other".
    if (command.assignments.some((assignment) => !SAFE_ENV.test(assignment)) && kind !== 'other') kind = 'other';
    if (judgement.safety !== undefined) verdicts.push({ kind: 'other', outcome: 'ask', reason: judgement.safety });
    if (judgement.cd !== undefined) verdicts.push(this.changeDirectory(judgement.cd));
    for (const word of judgement.reads) verdicts.push(this.pathVerdict(word, 'read', kind));
    for (const word of judgement.writes) verdicts.push(this.pathVerdict(word, 'write', kind));
    for (const redirect of command.redirects) {
      if (redirect.kind !== 'file' || !redirect.target) continue;
      const writes = WRITE_OPS.has(redirect.op);
      verdicts.push(this.pathVerdict(redirect.target, writes ? 'write' : 'read', kind));
      if (writes && !this.isDevice(redirect.target) && kind === 'read') kind = 'edit';
    }
    if (judgement.removes) verdicts.push(...judgement.removes.targets.map((word) => this.removal(word, judgement.removes?.recursive ?? false)));
    if (judgement.deleteRoots) verdicts.push(...judgement.deleteRoots.map((word) => this.removal(word, true)));
    for (const inner of judgement.inner ?? []) {
      const innerParts: ExecPartResult[] = [];
      const verdict = this.judgeCommand({ ...command, words: inner, redirects: [] }, inner, innerParts);
      extra.push({ content: commandRuleContent({ assignments: [], words: inner }), ...verdict }, ...innerParts);
    }
    let worst: Omit<ExecPartResult, 'content'> = { kind, outcome: 'allow', reason: judgement.reason };
    for (const verdict of verdicts) if (RANK[verdict.outcome] > RANK[worst.outcome]) worst = verdict;
    return { kind: worst.outcome !== 'allow' && worst.kind === 'other' ? 'other' : kind, outcome: worst.outcome, reason: worst.reason };
  }

  private isDevice(word: ShellWord): boolean {
    return word.value !== undefined && DEVICES.has(path.resolve(this.cwd, word.value));
  }

  private changeDirectory(target: ShellWord | 'home' | 'unknown'): Omit<ExecPartResult, 'content'> {
    const place =
      target === 'unknown'
        ? { where: 'unknown' as const }
        : target === 'home'
          ? this.home === undefined
            ? { where: 'unknown' as const }
            : placePath(this.home, this.workspace)
          : placeWord(target, this.cwd, this.workspace, this.home);
    if (place.where !== 'inside') return { kind: 'read', outcome: 'deny', reason: 'cd out of the workspace is refused' };
    this.cwd = place.real;
    return { kind: 'read', outcome: 'allow', reason: 'cd within the workspace' };
  }

  private pathVerdict(word: ShellWord, access: 'read' | 'write', kind: CommandJudgement['kind']): Omit<ExecPartResult, 'content'> {
    if (this.isDevice(word)) return { kind, outcome: 'allow', reason: 'a device' };
    const place = placeWord(word, this.cwd, this.workspace, this.home);
    const shown = word.value ?? word.text;
    if (place.where === 'unknown') return { kind, outcome: 'ask', reason: `the path ${shown} cannot be resolved before running` };
    if (place.where === 'outside') {
      return access === 'read'
        ? { kind, outcome: 'ask', reason: `reads ${place.real}, outside the workspace` }
        : { kind, outcome: 'deny', reason: `writes ${place.real}, outside the workspace` };
    }
    if (access === 'write') {
      // The same list core's safety check holds the file tools to (any `.git/`, `.ssh/`, rc files, …).
      const why = protectedWorkspacePathReason(path.relative(this.workspace, place.real).split(path.sep).join('/'));
      if (why !== undefined) return { kind, outcome: 'ask', reason: `writes ${place.real}: ${why}` };
    }
    return { kind, outcome: 'allow', reason: 'inside the workspace' };
  }

  private removal(word: ShellWord, recursive: boolean): Omit<ExecPartResult, 'content'> {
    const value = word.value;
    if (value === undefined) return { kind: 'edit', outcome: 'ask', reason: `removal of ${word.text}, which cannot be resolved before running` };
    if (!recursive) return { kind: 'edit', outcome: 'allow', reason: 'removes a workspace file' };
    if (word.tilde || value === '/' || /^\/+$/u.test(value)) return { kind: 'edit', outcome: 'ask', reason: `dangerous removal of ${value}` };
    const place = placeWord(word, this.cwd, this.workspace, this.home);
    if (place.where !== 'inside') return { kind: 'edit', outcome: 'ask', reason: `dangerous removal of ${value}` };
    const rel = path.relative(this.workspace, place.real);
    if (rel === '' || rel === '.git' || path.basename(place.real) === '.git')
      return { kind: 'edit', outcome: 'ask', reason: `dangerous removal of ${rel === '' ? 'the workspace root' : value}` };
    return { kind: 'edit', outcome: 'allow', reason: 'removes workspace files' };
  }
}
