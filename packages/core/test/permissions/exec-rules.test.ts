import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AnyTool, PermissionResult, ToolContext } from '@switchboard/agent';
import { type ExecChecks, loadExecChecks } from '@switchboard/tools/exec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decidePermission, matchCommand, type PermissionMode, type PipelineResult, validateContentPattern } from '../../src/index.js';
import { env, rule } from './fixtures.js';

let root: string;
let ws: string;
let checks: ExecChecks;
let execTool: AnyTool;

/**
 * `exec` as the real tool answers the pipeline: the real checks' verdict, one rule content per
 * simple command from the real parser. (The runner is not needed: nothing here is executed.)
 */
function checkedExec(c: ExecChecks): AnyTool {
  return {
    name: 'exec',
    description: 'run a command',
    input: z.strictObject({ command: z.string() }),
    readOnly: false,
    concurrencySafe: false,
    ruleContents: (input: { command: string }) => c.ruleContents(input),
    checkPermissions: async (input: { command: string }, toolCtx: ToolContext): Promise<PermissionResult> => {
      const verdict = c.analyze(input.command, { workspace: toolCtx.workspace });
      if (verdict.outcome === 'deny') return { behavior: 'deny', reason: verdict.reason, source: 'safety' };
      if (verdict.outcome === 'ask') return { behavior: 'ask', reason: verdict.reason, source: 'safety' };
      if (verdict.readOnly) return { behavior: 'passthrough', access: 'read' };
      return verdict.parts.every((part) => part.kind !== 'other') ? { behavior: 'passthrough', access: 'edit' } : { behavior: 'passthrough' };
    },
    call: async () => ({ content: '' }),
  };
}

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'core-exec-rules-'));
  ws = path.join(root, 'ws');
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  checks = await loadExecChecks();
  execTool = checkedExec(checks);
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const decide = (command: string, mode: PermissionMode, extra: Parameters<typeof env>[0] = {}): Promise<PipelineResult> =>
  decidePermission(
    {
      tool: execTool,
      input: { command },
      ctx: { signal: new AbortController().signal, toolUseId: 'tu_1', sessionId: 's1', turnId: 't1', agentId: 'main', workspace: ws },
    },
    env({ mode, ...extra }),
  );
const pick = (r: PipelineResult) => [r.behavior, r.source];
/** Whether an allow rule's content covers every part of `command`, with core's matcher. */
const allowedByPrefix = (pattern: string, command: string) => checks.ruleContents({ command }).every((part) => matchCommand(pattern, part, 'allow'));

describe('exec rule contents with core’s command matcher', () => {
  it('matches exact contents and prefix:* at a word boundary', () => {
    expect(matchCommand('npm test', 'npm test', 'allow')).toBe(true);
    expect(matchCommand('npm  test', 'npm test', 'allow')).toBe(true);
    expect(matchCommand('npm test', 'npm test --watch', 'allow')).toBe(false);
    expect(matchCommand('git:*', 'git', 'allow')).toBe(true);
    expect(matchCommand('git:*', 'git status', 'allow')).toBe(true);
    expect(matchCommand('git:*', 'gitx status', 'allow')).toBe(false);
  });

  it('a prefix allow covers each part, never a chained one as a whole', () => {
    const parts = checks.ruleContents({ command: 'git status; rm -rf ~' });
    expect(parts).toEqual(['git status', 'rm -rf ~']);
    expect(parts.map((part) => matchCommand('git:*', part, 'allow'))).toEqual([true, false]);
    expect(allowedByPrefix('git:*', 'git status && git log')).toBe(true);
  });

  it("quote removal reaches the matcher: r''m and $'\\x72m' are rm", () => {
    for (const command of ["r''m -rf build", "$'\\x72m' -rf build", '"rm" -rf build']) {
      expect(
        checks.ruleContents({ command }).some((part) => matchCommand('rm:*', part, 'deny')),
        command,
      ).toBe(true);
    }
  });

  it('a part that still holds a $(…) or `…` in written form is never covered by a prefix allow', () => {
    const parts = checks.ruleContents({ command: 'echo $(curl evil)' });
    expect(parts).toEqual(['curl evil', 'echo $(curl evil)']);
    expect(matchCommand('echo:*', 'echo $(curl evil)', 'allow')).toBe(false);
    expect(allowedByPrefix('echo:*', 'echo $(curl evil)')).toBe(false);
    expect(allowedByPrefix('echo:*', 'echo `id`')).toBe(false);
    // Even with the inner command allowed too: the outer part is not `echo` plus plain words.
    expect(checks.ruleContents({ command: 'echo $(echo hi)' }).every((part) => matchCommand('echo:*', part, 'allow'))).toBe(false);
  });
});

describe('exec rule contents keep file redirections', () => {
  it('a prefix allow does not cover a part that writes through a redirection; /dev/null is no write', () => {
    expect(checks.ruleContents({ command: 'echo hi > notes.txt' })).toEqual(['echo hi >notes.txt']);
    expect(allowedByPrefix('echo:*', 'echo hi > notes.txt')).toBe(false);
    expect(allowedByPrefix('echo:*', 'echo hi')).toBe(true);
    expect(checks.ruleContents({ command: 'npm test 2>/dev/null' })).toEqual(['npm test']);
    expect(matchCommand('npm test', checks.ruleContents({ command: 'npm test 2>/dev/null' })[0] ?? '', 'allow')).toBe(true);
  });

  it('the empty prefix is no pattern at all', () => {
    expect(() => validateContentPattern('command', ':*')).toThrow(/empty/);
  });
});

describe('decidePermission with the real exec checks', () => {
  it('rm -rf . under bypassPermissions asks (safety), and no allow rule answers it', async () => {
    const r = await decide('rm -rf .', 'bypassPermissions', { ruleSet: [rule('allow', 'exec'), rule('allow', 'exec(rm:*)')] });
    expect(pick(r)).toEqual(['ask', 'safety']);
    expect(pick(await decide('rm -rf .', 'dontAsk'))).toEqual(['deny', 'mode']);
  });

  it('a wrapped dangerous removal asks too, and a deny rule reaches the wrapped command', async () => {
    expect(pick(await decide('timeout 5 rm -rf .', 'bypassPermissions'))).toEqual(['ask', 'safety']);
    const r = await decide('timeout 5 rm -rf build', 'bypassPermissions', { ruleSet: [rule('deny', 'exec(rm:*)')] });
    expect(pick(r)).toEqual(['deny', 'rule']);
    expect(r.reason).toContain('rm -rf build');
    // A prefix allow on the wrapper alone does not allow what it runs.
    expect(pick(await decide('timeout 5 touch a', 'default', { ruleSet: [rule('allow', 'exec(timeout:*)')] }))).toEqual(['ask', 'mode']);
  });

  it('in plan, ls && cat f runs and touch a is denied', async () => {
    expect(pick(await decide('ls && cat f', 'plan'))).toEqual(['allow', 'mode']);
    expect(pick(await decide('touch a', 'plan'))).toEqual(['deny', 'mode']);
  });

  it('in default, echo hi && ls is allowed as read-only; touch a asks; acceptEdits lets touch a through', async () => {
    const r = await decide('echo hi && ls', 'default');
    expect(pick(r)).toEqual(['allow', 'mode']);
    expect(r.reason).toMatch(/read-only/);
    expect(pick(await decide('touch a', 'default'))).toEqual(['ask', 'mode']);
    expect(pick(await decide('touch a', 'acceptEdits'))).toEqual(['allow', 'mode']);
    expect(pick(await decide('touch a && curl x', 'acceptEdits'))).toEqual(['ask', 'mode']);
  });

  it('a write outside the workspace is denied with kind safety, even under bypassPermissions', async () => {
    expect(pick(await decide('touch /tmp/x', 'bypassPermissions', { ruleSet: [rule('allow', 'exec')] }))).toEqual(['deny', 'safety']);
  });

  it('per-part rules: echo $(curl evil) is not allowed by exec(echo:*); exec(curl:*) denies it', async () => {
    expect(pick(await decide('echo $(curl evil)', 'default', { ruleSet: [rule('allow', 'exec(echo:*)')] }))).toEqual(['ask', 'mode']);
    const r = await decide('echo $(curl evil)', 'default', { ruleSet: [rule('deny', 'Bash(curl:*)')] });
    expect(pick(r)).toEqual(['deny', 'rule']);
    expect(r.reason).toContain('curl evil');
    expect(pick(await decide('echo hi > notes.txt', 'default', { ruleSet: [rule('allow', 'exec(echo:*)')] }))).toEqual(['ask', 'mode']);
    expect(pick(await decide('npm test && git push', 'default', { ruleSet: [rule('allow', 'exec(npm test)'), rule('allow', 'exec(git:*)')] }))).toEqual([
      'allow',
      'rule',
    ]);
  });
});
