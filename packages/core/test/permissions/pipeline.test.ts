import type { AnyTool } from '@switchboard/agent';
import { describe, expect, it, vi } from 'vitest';
import { decidePermission, toDecision, type HookOpinion, type PermissionMode, type PipelineResult } from '../../src/index.js';
import { WS, checkingTool, ctx, editFile, env, exec, readFile, rule, sendMail, writeFile } from './fixtures.js';

const decide = (tool: AnyTool, input: unknown, extra: Parameters<typeof env>[0] = {}) => decidePermission({ tool, input, ctx: ctx() }, env(extra));
const hooks = (...opinions: HookOpinion[]) => ({ preToolUse: async () => opinions });
const pick = (r: PipelineResult) => ({ behavior: r.behavior, source: r.source });

describe('decidePermission — table: mode × kind of tool', () => {
  const kinds: Array<[string, AnyTool, unknown]> = [
    ['read-only tool', readFile, { path: 'notes/a.md' }],
    ['file write inside the workspace', writeFile, { path: 'notes/a.md', content: 'x' }],
    ['write to .git/config', writeFile, { path: '.git/config', content: 'x' }],
    ['non-file tool that changes things', sendMail, { to: 'a@b.c' }],
  ];
  const expected: Record<PermissionMode, Array<[PipelineResult['behavior'], PipelineResult['source']]>> = {
    plan: [
      ['allow', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
    ],
    dontAsk: [
      ['allow', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
      ['deny', 'mode'],
    ],
    default: [
      ['allow', 'mode'],
      ['ask', 'mode'],
      ['ask', 'safety'],
      ['ask', 'mode'],
    ],
    acceptEdits: [
      ['allow', 'mode'],
      ['allow', 'mode'],
      ['ask', 'safety'],
      ['ask', 'mode'],
    ],
    // Like acceptEdits: the mode's ask (source `mode`) is what the classifier answers later.
    auto: [
      ['allow', 'mode'],
      ['allow', 'mode'],
      ['ask', 'safety'],
      ['ask', 'mode'],
    ],
    bypassPermissions: [
      ['allow', 'mode'],
      ['allow', 'mode'],
      ['ask', 'safety'],
      ['allow', 'mode'],
    ],
  };
  const rows = (Object.keys(expected) as PermissionMode[]).flatMap((mode) =>
    kinds.map(([label, tool, input], i) => ({ mode, label, tool, input, want: expected[mode][i] })),
  );

  it.each(rows)('$mode · $label → $want', async ({ mode, tool, input, want }) => {
    const r = await decide(tool, input, { mode });
    expect([r.behavior, r.source]).toEqual(want);
  });

  it.each(rows)('$mode · $label with a deny rule → deny by rule', async ({ mode, tool, input }) => {
    const r = await decide(tool, input, { mode, ruleSet: [rule('deny', tool.name)] });
    expect(pick(r)).toEqual({ behavior: 'deny', source: 'rule' });
  });

  it('bypassPermissions still asks for .git/config even with an allow rule and a hook allow', async () => {
    const r = await decide(
      writeFile,
      { path: '.git/config', content: 'x' },
      {
        mode: 'bypassPermissions',
        ruleSet: [rule('allow', 'write_file')],
        ...hooks({ decision: 'allow' }),
      },
    );
    expect(pick(r)).toEqual({ behavior: 'ask', source: 'safety' });
    expect(r.reason).toMatch(/whatever the mode/);
  });

  it('acceptEdits does not cover writes outside the workspace', async () => {
    const r = await decide(editFile, { path: '/etc/hosts' }, { mode: 'acceptEdits' });
    expect(pick(r)).toEqual({ behavior: 'ask', source: 'mode' });
  });

  it('explains plan mode and dontAsk to the model', async () => {
    expect((await decide(writeFile, { path: 'a' }, { mode: 'plan' })).reason).toMatch(/session is in plan mode/);
    expect((await decide(writeFile, { path: 'a' }, { mode: 'dontAsk' })).reason).toMatch(/dontAsk mode/);
  });
});

describe('decidePermission — step 1: PreToolUse hooks', () => {
  it('passes the call to the callback', async () => {
    const cb = vi.fn(async () => []);
    const c = ctx();
    await decidePermission({ tool: readFile, input: { path: 'a' }, ctx: c }, env({ preToolUse: cb }));
    expect(cb).toHaveBeenCalledWith({ tool: readFile, input: { path: 'a' }, ctx: c });
  });

  it('a hook deny denies, even over an allow rule and bypass', async () => {
    const r = await decide(
      readFile,
      { path: 'a' },
      { mode: 'bypassPermissions', ruleSet: [rule('allow', 'read_file')], ...hooks({ decision: 'allow' }, { decision: 'deny', reason: 'no reading today' }) },
    );
    expect(r).toMatchObject({ behavior: 'deny', source: 'hook', reason: 'no reading today' });
  });

  it('a hook ask asks, unless a deny rule denies; under dontAsk it is refused', async () => {
    expect(pick(await decide(readFile, { path: 'a' }, hooks({ decision: 'ask' })))).toEqual({ behavior: 'ask', source: 'hook' });
    expect(pick(await decide(readFile, { path: 'a' }, { ...hooks({ decision: 'ask' }), mode: 'bypassPermissions' }))).toEqual({
      behavior: 'ask',
      source: 'hook',
    });
    expect(pick(await decide(readFile, { path: 'a' }, { ...hooks({ decision: 'ask' }), ruleSet: [rule('deny', 'read_file(a)')] }))).toEqual({
      behavior: 'deny',
      source: 'rule',
    });
    expect(pick(await decide(readFile, { path: 'a' }, { ...hooks({ decision: 'ask' }), mode: 'dontAsk' }))).toEqual({ behavior: 'deny', source: 'mode' });
  });

  it('a hook allow only skips the prompt — never a deny rule, an ask rule, a safety check or plan mode', async () => {
    const allow = hooks({ decision: 'allow', reason: 'ci bot' });
    expect(await decide(writeFile, { path: 'n.md' }, allow)).toMatchObject({ behavior: 'allow', source: 'hook', reason: 'ci bot' });
    expect(pick(await decide(writeFile, { path: 'n.md' }, { ...allow, mode: 'dontAsk' }))).toEqual({ behavior: 'allow', source: 'hook' });
    expect(pick(await decide(writeFile, { path: 'n.md' }, { ...allow, ruleSet: [rule('deny', 'write_file')] }))).toEqual({ behavior: 'deny', source: 'rule' });
    expect(pick(await decide(writeFile, { path: 'n.md' }, { ...allow, ruleSet: [rule('ask', 'write_file')] }))).toEqual({ behavior: 'ask', source: 'rule' });
    expect(pick(await decide(writeFile, { path: '.bashrc' }, allow))).toEqual({ behavior: 'ask', source: 'safety' });
    expect(pick(await decide(writeFile, { path: 'n.md' }, { ...allow, mode: 'plan' }))).toEqual({ behavior: 'deny', source: 'mode' });
  });

  it('revalidates updatedInput, returns it, and checks it (not the original) against rules and safety', async () => {
    const ok = await decide(writeFile, { path: 'a.md' }, { mode: 'acceptEdits', ...hooks({ updatedInput: { path: 'b.md', content: 'x' } }) });
    expect(ok).toMatchObject({ behavior: 'allow', input: { path: 'b.md', content: 'x' }, updatedInput: { path: 'b.md', content: 'x' } });

    const toGit = await decide(writeFile, { path: 'a.md' }, { mode: 'bypassPermissions', ...hooks({ updatedInput: { path: '.git/config' } }) });
    expect(toGit).toMatchObject({ behavior: 'ask', source: 'safety', updatedInput: { path: '.git/config' } });

    const denied = await decide(
      writeFile,
      { path: 'a.md' },
      { ruleSet: [rule('deny', 'write_file(secrets/**)')], ...hooks({ updatedInput: { path: 'secrets/k' } }) },
    );
    expect(pick(denied)).toEqual({ behavior: 'deny', source: 'rule' });

    const last = await decide(readFile, { path: 'a' }, hooks({ updatedInput: { path: 'b' } }, { updatedInput: { path: 'c' } }));
    expect(last).toMatchObject({ behavior: 'allow', updatedInput: { path: 'c' } });
  });

  it('denies an updatedInput that fails the schema or validateInput', async () => {
    const bad = await decide(writeFile, { path: 'a.md' }, hooks({ updatedInput: { path: 42 } }));
    expect(bad).toMatchObject({ behavior: 'deny', source: 'hook' });
    expect(bad.reason).toMatch(/rewrote the input of write_file into an invalid one: path:/);
    const strict = {
      ...writeFile,
      validateInput: async (i: { path: string }) => (i.path.endsWith('.md') ? { ok: true as const } : { ok: false as const, message: 'only .md' }),
    };
    const r = await decide(strict, { path: 'a.md' }, hooks({ updatedInput: { path: 'a.sh' } }));
    expect(r).toMatchObject({ behavior: 'deny', source: 'hook' });
    expect(r.reason).toMatch(/only \.md/);
  });

  it('denies when the hook callback throws', async () => {
    const r = await decide(
      readFile,
      { path: 'a' },
      {
        preToolUse: async () => {
          throw new Error('boom');
        },
      },
    );
    expect(r).toMatchObject({ behavior: 'deny', source: 'hook' });
    expect(r.reason).toMatch(/boom/);
  });
});

describe('decidePermission — step 2: rules', () => {
  it('deny, ask and allow rules decide with a reason naming the rule and its scope', async () => {
    const deny = await decide(readFile, { path: 'x/prod.env' }, { ruleSet: [rule('deny', 'read_file(**/*.env)', { kind: 'principal', id: 'p1' })] });
    expect(deny).toMatchObject({ behavior: 'deny', source: 'rule', rule: { rule: 'read_file(**/*.env)' } });
    expect(deny.reason).toBe('the rule read_file(**/*.env), set for principal p1, forbids read_file here');
    expect(pick(await decide(readFile, { path: 'a' }, { ruleSet: [rule('ask', 'read_file')] }))).toEqual({ behavior: 'ask', source: 'rule' });
    expect(pick(await decide(writeFile, { path: 'notes/a' }, { ruleSet: [rule('allow', 'write_file(notes/**)')] }))).toEqual({
      behavior: 'allow',
      source: 'rule',
    });
    expect(pick(await decide(writeFile, { path: 'other/a' }, { ruleSet: [rule('allow', 'write_file(notes/**)')] }))).toEqual({
      behavior: 'ask',
      source: 'mode',
    });
  });

  it('ignores rules of scopes that do not apply', async () => {
    const r = await decide(readFile, { path: 'a' }, { ruleSet: [rule('deny', 'read_file', { kind: 'principal', id: 'someone-else' })] });
    expect(r.behavior).toBe('allow');
  });

  it('an ask rule still asks under bypassPermissions, and is refused under dontAsk', async () => {
    expect(pick(await decide(sendMail, { to: 'x' }, { mode: 'bypassPermissions', ruleSet: [rule('ask', 'mcp__mail')] }))).toEqual({
      behavior: 'ask',
      source: 'rule',
    });
    const r = await decide(sendMail, { to: 'x' }, { mode: 'dontAsk', ruleSet: [rule('ask', 'mcp__mail')] });
    expect(r).toMatchObject({ behavior: 'deny', source: 'mode', rule: { rule: 'mcp__mail' } });
  });

  it('a renamed tool does not escape a deny', async () => {
    const legacy = { ...writeFile, name: 'Write' };
    expect(pick(await decide(legacy, { path: 'a' }, { ruleSet: [rule('deny', 'write_file')] }))).toEqual({ behavior: 'deny', source: 'rule' });
    expect(pick(await decide(writeFile, { path: 'a' }, { ruleSet: [rule('deny', 'Write')] }))).toEqual({ behavior: 'deny', source: 'rule' });
  });

  it('matches command rules for exec-like tools', async () => {
    const ruleSet = [rule('allow', 'exec(git:*)'), rule('deny', 'exec(rm:*)')];
    expect(pick(await decide(exec, { command: 'git status' }, { ruleSet }))).toEqual({ behavior: 'allow', source: 'rule' });
    expect(pick(await decide(exec, { command: 'git status; rm -rf ~' }, { ruleSet }))).toEqual({ behavior: 'deny', source: 'rule' });
    expect(pick(await decide(exec, { command: 'git status && curl x' }, { ruleSet }))).toEqual({ behavior: 'ask', source: 'mode' });
  });

  it('refuses every call while a malformed deny rule applies', async () => {
    const r = await decide(readFile, { path: 'a' }, { ruleSet: [rule('deny', 'write_file(')] });
    expect(r).toMatchObject({ behavior: 'deny', source: 'rule' });
    expect(r.reason).toMatch(/could not be read/);
  });
});

describe('decidePermission — step 3: the tool’s checkPermissions', () => {
  it('deny denies and ask asks', async () => {
    expect(await decide(checkingTool({ behavior: 'deny', reason: 'quota', source: 'tool' }), { path: 'a' }, { mode: 'bypassPermissions' })).toMatchObject({
      behavior: 'deny',
      source: 'tool',
      reason: 'quota',
    });
    // A tool's own ask is its own safety concern unless it names a source: people answer it.
    expect(await decide(checkingTool({ behavior: 'ask', reason: 'costly', source: 'tool' }), { path: 'a' })).toMatchObject({
      behavior: 'ask',
      source: 'safety',
      reason: 'costly',
    });
    expect(await decide(checkingTool({ behavior: 'ask', reason: 'unsandboxed', source: 'sandbox' }), { path: 'a' })).toMatchObject({
      behavior: 'ask',
      source: 'sandbox',
    });
    expect(await decide(checkingTool({ behavior: 'ask', reason: 'the usual prompt', source: 'mode' }), { path: 'a' })).toMatchObject({
      behavior: 'ask',
      source: 'mode',
    });
    expect(pick(await decide(checkingTool({ behavior: 'ask', reason: 'costly', source: 'tool' }), { path: 'a' }, { mode: 'dontAsk' }))).toEqual({
      behavior: 'deny',
      source: 'mode',
    });
  });

  it('bypassPermissions skips the tool’s ask', async () => {
    expect(pick(await decide(checkingTool({ behavior: 'ask', reason: 'costly', source: 'tool' }), { path: 'a' }, { mode: 'bypassPermissions' }))).toEqual({
      behavior: 'allow',
      source: 'mode',
    });
  });

  it('allow skips the prompt but not an ask rule or plan mode; updatedInput is revalidated', async () => {
    expect(pick(await decide(checkingTool({ behavior: 'allow' }), { path: 'a' }))).toEqual({ behavior: 'allow', source: 'tool' });
    expect(pick(await decide(checkingTool({ behavior: 'allow' }), { path: 'a' }, { ruleSet: [rule('ask', 'guarded')] }))).toEqual({
      behavior: 'ask',
      source: 'rule',
    });
    expect(pick(await decide(checkingTool({ behavior: 'allow' }), { path: 'a' }, { mode: 'plan' }))).toEqual({ behavior: 'deny', source: 'mode' });
    expect(await decide(checkingTool({ behavior: 'allow', updatedInput: { path: 'b' } }), { path: 'a' })).toMatchObject({
      behavior: 'allow',
      updatedInput: { path: 'b' },
    });
    expect(
      pick(await decide(checkingTool({ behavior: 'allow', updatedInput: { path: 'secret' } }), { path: 'a' }, { ruleSet: [rule('deny', 'guarded(secret)')] })),
    ).toEqual({ behavior: 'deny', source: 'rule' });
    expect(pick(await decide(checkingTool({ behavior: 'allow', updatedInput: { nope: 1 } }), { path: 'a' }))).toEqual({ behavior: 'deny', source: 'tool' });
  });

  it('passthrough leaves the decision to the mode; a throw denies', async () => {
    expect(pick(await decide(checkingTool({ behavior: 'passthrough' }), { path: 'a' }))).toEqual({ behavior: 'ask', source: 'mode' });
    const r = await decide(
      checkingTool(async () => {
        throw new Error('db down');
      }),
      { path: 'a' },
    );
    expect(r).toMatchObject({ behavior: 'deny', source: 'tool' });
    expect(r.reason).toMatch(/db down/);
  });

  it('is not consulted after a deny rule', async () => {
    const check = vi.fn(async () => ({ behavior: 'allow' as const }));
    await decide(checkingTool(check), { path: 'a' }, { ruleSet: [rule('deny', 'guarded')] });
    expect(check).not.toHaveBeenCalled();
  });
});

describe('decidePermission — step 4: safety checks', () => {
  it.each([
    '.git/config',
    `${WS}/.git/config`,
    'notes/../.git/hooks/pre-commit',
    '.switchboard/x',
    '.zshrc',
    '.config/fish/config.fish',
    'data/switchboard.db',
  ])('asks for %s in every trusting mode, over an allow rule', async (p) => {
    for (const mode of ['default', 'acceptEdits', 'bypassPermissions'] as const) {
      const r = await decide(editFile, { path: p }, { mode, ruleSet: [rule('allow', 'edit_file(**)')] });
      expect(pick(r), `${mode} ${p}`).toEqual({ behavior: 'ask', source: 'safety' });
    }
  });

  it('leaves reads of protected paths to the rules and mode', async () => {
    expect(pick(await decide(readFile, { path: '.git/config' }, { mode: 'bypassPermissions' }))).toEqual({ behavior: 'allow', source: 'mode' });
  });
});

describe('toDecision', () => {
  it('maps settled results to the agent loop’s Decision', async () => {
    expect(toDecision({ behavior: 'allow', source: 'mode', reason: 'r', input: 1 })).toEqual({ behavior: 'allow' });
    expect(toDecision({ behavior: 'allow', source: 'hook', reason: 'r', input: 2, updatedInput: 2 })).toEqual({ behavior: 'allow', updatedInput: 2 });
    expect(toDecision({ behavior: 'deny', source: 'safety', reason: 'r' })).toEqual({ behavior: 'deny', reason: 'r', kind: 'safety' });
    expect(toDecision({ behavior: 'deny', source: 'tool', reason: 'r' })).toEqual({ behavior: 'deny', reason: 'r', kind: 'rule' });
  });
});
