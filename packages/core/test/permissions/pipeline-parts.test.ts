import type { AnyTool, PermissionResult } from '@switchboard/agent';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decidePermission, type HookOpinion, type PermissionMode, type PipelineResult, toDecision } from '../../src/index.js';
import { ctx, env, rule } from './fixtures.js';

/**
 * A fake `exec`: its parts are the `&&`-separated pieces of `command` (the real tool parses the
 * shell), and its own check answers `own` — the shapes the real exec tool returns.
 */
function partsTool(own: PermissionResult | ((command: string) => PermissionResult), name = 'exec'): AnyTool {
  return {
    name,
    description: 'run a command',
    input: z.strictObject({ command: z.string() }),
    readOnly: false,
    concurrencySafe: false,
    ruleContents: (input: { command: string }) => input.command.split('&&').map((part) => part.trim()),
    checkPermissions: async (input: { command: string }) => (typeof own === 'function' ? own(input.command) : own),
    call: async () => ({ content: '' }),
  };
}

const decide = (tool: AnyTool, command: string, extra: Parameters<typeof env>[0] = {}) =>
  decidePermission({ tool, input: { command }, ctx: ctx() }, env(extra));
const pick = (r: PipelineResult) => [r.behavior, r.source];
const hooks = (...opinions: HookOpinion[]) => ({ preToolUse: async () => opinions });
const passthrough: PermissionResult = { behavior: 'passthrough' };

describe('decidePermission — per-call classification and the tool’s own asks, across the modes', () => {
  const kinds: Array<[string, PermissionResult]> = [
    ['reads only (access read)', { behavior: 'passthrough', access: 'read' }],
    ['edits inside the workspace (access edit)', { behavior: 'passthrough', access: 'edit' }],
    ['anything else (no access)', passthrough],
    ['own ask, source safety', { behavior: 'ask', reason: 'a dangerous removal', source: 'safety' }],
    ['own ask, source sandbox', { behavior: 'ask', reason: 'runs unsandboxed', source: 'sandbox' }],
    ['own deny, source safety', { behavior: 'deny', reason: 'writes outside the workspace', source: 'safety' }],
  ];
  const expected: Record<PermissionMode, string[][]> = {
    plan: [
      ['allow', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
      ['deny', 'safety'],
    ],
    dontAsk: [
      ['allow', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
      ['deny', 'safety'],
    ],
    default: [
      ['allow', 'mode'],
      ['ask', 'mode'],
      ['ask', 'mode'],
      ['ask', 'safety'],
      ['ask', 'sandbox'],
      ['deny', 'safety'],
    ],
    acceptEdits: [
      ['allow', 'mode'],
      ['allow', 'mode'],
      ['ask', 'mode'],
      ['ask', 'safety'],
      ['ask', 'sandbox'],
      ['deny', 'safety'],
    ],
    bypassPermissions: [
      ['allow', 'mode'],
      ['allow', 'mode'],
      ['allow', 'mode'],
      ['ask', 'safety'],
      ['ask', 'sandbox'],
      ['deny', 'safety'],
    ],
  };
  const rows = (Object.keys(expected) as PermissionMode[]).flatMap((mode) => kinds.map(([label, own], i) => ({ mode, label, own, want: expected[mode][i] })));

  it.each(rows)('$mode · $label → $want', async ({ mode, own, want }) => {
    expect(pick(await decide(partsTool(own), 'ls && cat f', { mode }))).toEqual(want);
  });

  it('an own safety or sandbox ask is answered by no allow rule and no hook allow, whatever the mode', async () => {
    for (const source of ['safety', 'sandbox'] as const) {
      const tool = partsTool({ behavior: 'ask', reason: 'only a person may allow this', source });
      for (const mode of ['default', 'acceptEdits', 'bypassPermissions'] as const) {
        const r = await decide(tool, 'ls', { mode, ruleSet: [rule('allow', 'exec'), rule('allow', 'exec(ls)')], ...hooks({ decision: 'allow' }) });
        expect(r, `${source} in ${mode}`).toMatchObject({ behavior: 'ask', source, reason: 'only a person may allow this' });
      }
    }
  });

  it('an own safety ask is the one shown when an ask rule or a hook asks too', async () => {
    const tool = partsTool({ behavior: 'ask', reason: 'a dangerous removal', source: 'safety' });
    const r = await decide(tool, 'rm -rf .', { ruleSet: [rule('ask', 'exec(rm:*)')], ...hooks({ decision: 'ask' }) });
    expect(r).toMatchObject({ behavior: 'ask', source: 'safety', reason: 'a dangerous removal' });
  });

  it('an own ask with any other source is still skipped by bypassPermissions', async () => {
    const tool = partsTool({ behavior: 'ask', reason: 'costly', source: 'tool' });
    expect(pick(await decide(tool, 'ls', { mode: 'bypassPermissions' }))).toEqual(['allow', 'mode']);
    expect(pick(await decide(tool, 'ls'))).toEqual(['ask', 'safety']);
  });

  it('an own safety deny is reported to the loop with kind safety; another own deny keeps kind rule', async () => {
    const safety = await decide(partsTool({ behavior: 'deny', reason: 'cd leaves the workspace', source: 'safety' }), 'cd ..');
    expect(safety.behavior).toBe('deny');
    if (safety.behavior !== 'deny') return;
    expect(toDecision(safety)).toEqual({ behavior: 'deny', reason: 'cd leaves the workspace', kind: 'safety' });
    const quota = await decide(partsTool({ behavior: 'deny', reason: 'quota', source: 'tool' }), 'ls');
    expect(quota.behavior).toBe('deny');
    if (quota.behavior !== 'deny') return;
    expect(toDecision(quota)).toEqual({ behavior: 'deny', reason: 'quota', kind: 'rule' });
  });

  it('access read does not outrank an ask rule, a deny rule or a hook ask', async () => {
    const tool = partsTool({ behavior: 'passthrough', access: 'read' });
    expect(pick(await decide(tool, 'ls && cat f', { ruleSet: [rule('ask', 'exec(cat:*)')] }))).toEqual(['ask', 'rule']);
    expect(pick(await decide(tool, 'ls && cat f', { mode: 'plan', ruleSet: [rule('deny', 'exec(cat:*)')] }))).toEqual(['deny', 'rule']);
    expect(pick(await decide(tool, 'ls', hooks({ decision: 'ask' })))).toEqual(['ask', 'hook']);
  });

  it('without access, the static readOnly decides as before', async () => {
    const readOnlyTool = { ...partsTool(passthrough), readOnly: true };
    expect(pick(await decide(readOnlyTool, 'ls', { mode: 'plan' }))).toEqual(['allow', 'mode']);
    expect(pick(await decide(partsTool(passthrough), 'ls', { mode: 'plan' }))).toEqual(['deny', 'mode']);
  });
});

describe('decidePermission — rules evaluated per part', () => {
  const tool = partsTool(passthrough);

  it('a deny on one part of three denies the call, naming the part and the rule', async () => {
    const r = await decide(tool, 'ls && rm x && cat y', { mode: 'bypassPermissions', ruleSet: [rule('allow', 'exec'), rule('deny', 'exec(rm:*)')] });
    expect(pick(r)).toEqual(['deny', 'rule']);
    expect(r.reason).toContain('exec(rm:*)');
    expect(r.reason).toContain('rm x');
    expect(r.rule?.rule).toBe('exec(rm:*)');
  });

  it('an allow that covers only some parts allows nothing: the mode decides', async () => {
    const r = await decide(tool, 'ls && touch a', { ruleSet: [rule('allow', 'exec(ls:*)')] });
    expect(pick(r)).toEqual(['ask', 'mode']);
  });

  it('the call is allowed by rules when every part is allowed by some rule', async () => {
    const r = await decide(tool, 'ls -la && npm test', { ruleSet: [rule('allow', 'exec(ls:*)'), rule('allow', 'exec(npm test)')] });
    expect(pick(r)).toEqual(['allow', 'rule']);
    expect(r.reason).toContain('exec(ls:*)');
    expect(r.reason).toContain('exec(npm test)');
    // Exact means exact: `npm test --watch` is not `npm test`.
    expect(pick(await decide(tool, 'npm test --watch', { ruleSet: [rule('allow', 'exec(npm test)')] }))).toEqual(['ask', 'mode']);
    // A prefix stops at a word: `gitx` is not `git`.
    expect(pick(await decide(tool, 'gitx status', { ruleSet: [rule('allow', 'exec(git:*)')] }))).toEqual(['ask', 'mode']);
    expect(pick(await decide(tool, 'git && git status', { ruleSet: [rule('allow', 'exec(git:*)')] }))).toEqual(['allow', 'rule']);
  });

  it('an ask rule on one part asks, even where every part is allowed and under bypassPermissions', async () => {
    const r = await decide(tool, 'git status && git push origin', {
      mode: 'bypassPermissions',
      ruleSet: [rule('allow', 'exec(git:*)'), rule('ask', 'exec(git push:*)')],
    });
    expect(pick(r)).toEqual(['ask', 'rule']);
    expect(r.reason).toContain('git push origin');
    expect(pick(await decide(tool, 'git status && git push', { mode: 'dontAsk', ruleSet: [rule('ask', 'exec(git push:*)')] }))).toEqual(['deny', 'mode']);
  });

  it('Bash(...) rules are exec rules (alias), per part', async () => {
    expect(pick(await decide(tool, 'npm test && ls', { ruleSet: [rule('allow', 'Bash(npm test)'), rule('allow', 'Bash(ls:*)')] }))).toEqual(['allow', 'rule']);
    const r = await decide(tool, 'ls && rm -rf build', { mode: 'bypassPermissions', ruleSet: [rule('deny', 'Bash(rm:*)')] });
    expect(pick(r)).toEqual(['deny', 'rule']);
    expect(r.reason).toContain('rm -rf build');
  });

  it('a prefix allow never covers a part that still holds shell syntax; an exact allow of that text does', async () => {
    expect(pick(await decide(tool, 'echo $(id)', { ruleSet: [rule('allow', 'exec(echo:*)')] }))).toEqual(['ask', 'mode']);
    expect(pick(await decide(tool, 'echo `id`', { ruleSet: [rule('allow', 'exec(echo:*)')] }))).toEqual(['ask', 'mode']);
    expect(pick(await decide(tool, 'echo $(id)', { ruleSet: [rule('allow', 'exec(echo $\\(id\\))')] }))).toEqual(['allow', 'rule']);
    // A deny matches inside the part's written substitution too.
    expect(pick(await decide(tool, 'echo $(curl evil)', { ruleSet: [rule('deny', 'exec(curl:*)')] }))).toEqual(['deny', 'rule']);
  });

  it('a whole-tool rule covers every part', async () => {
    expect(pick(await decide(tool, 'a && b && c', { ruleSet: [rule('allow', 'exec')] }))).toEqual(['allow', 'rule']);
    expect(pick(await decide(tool, 'a && b', { mode: 'bypassPermissions', ruleSet: [rule('deny', 'exec')] }))).toEqual(['deny', 'rule']);
  });

  it('a deny rule on a part denies before the tool’s own check or the mode; a rule allow does not outrank plan', async () => {
    const readTool = partsTool({ behavior: 'passthrough', access: 'read' });
    expect(pick(await decide(readTool, 'ls && cat f', { mode: 'plan', ruleSet: [rule('allow', 'exec')] }))).toEqual(['allow', 'rule']);
    expect(pick(await decide(tool, 'touch a', { mode: 'plan', ruleSet: [rule('allow', 'exec')] }))).toEqual(['deny', 'mode']);
  });

  it('ruleContents that throw or give no part refuse the call', async () => {
    const throwing: AnyTool = {
      ...tool,
      ruleContents: () => {
        throw new Error('grammar not loaded');
      },
    };
    const r = await decide(throwing, 'ls', { mode: 'bypassPermissions' });
    expect(pick(r)).toEqual(['deny', 'tool']);
    expect(r.reason).toMatch(/grammar not loaded/);
    expect(pick(await decide({ ...tool, ruleContents: () => [] }, 'ls', { mode: 'bypassPermissions' }))).toEqual(['deny', 'tool']);
  });

  it('ruleContents take precedence over ruleContent', async () => {
    const both: AnyTool = { ...tool, ruleContent: () => 'ls' };
    expect(pick(await decide(both, 'ls && rm x', { ruleSet: [rule('allow', 'exec(ls)')] }))).toEqual(['ask', 'mode']);
  });

  it('rules are re-checked per part on an input the tool rewrote', async () => {
    const rewriting = partsTool(() => ({ behavior: 'allow', updatedInput: { command: 'ls && rm x' } }));
    expect(pick(await decide(rewriting, 'ls', { ruleSet: [rule('deny', 'exec(rm:*)')] }))).toEqual(['deny', 'rule']);
  });
});
