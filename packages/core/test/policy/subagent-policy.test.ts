import { describe, expect, it } from 'vitest';
import { createTaskTool } from '../../src/index.js';
import { sendMail, writeFile } from '../permissions/fixtures.js';
import { baseSettings, TOOLS, usePolicy } from './fixture.js';

const env = usePolicy();

describe('several approvals pending in one turn', () => {
  it('the turn stays awaiting_approval until the last pending approval is answered', async () => {
    env.setup();
    const member = await env.principal('member');
    const turn = await env.turn({ principalId: member });
    const who = { kind: 'principal' as const, principalId: member, role: 'member' as const };
    // Two subagents of the turn ask at once.
    const requested = [turn.next('approval_requested'), turn.next('approval_requested')];
    const one = turn.policy.canUseTool(sendMail, { to: 'a@example.com' }, turn.toolCtx('toolu_one'));
    const two = turn.policy.canUseTool(sendMail, { to: 'b@example.com' }, turn.toolCtx('toolu_two'));
    const [first, second] = await Promise.all(requested);
    if (first?.type !== 'approval_requested' || second?.type !== 'approval_requested') throw new Error('unreachable');
    const state = async () => (await env.storage.turns.get(turn.ctx.turn.id))?.state;
    expect(await state()).toBe('awaiting_approval');

    await env.broker.decide(first.approvalId, 'allow', false, who);
    expect(await one).toEqual({ behavior: 'allow' });
    // The other approval still waits: the turn is not running again yet.
    expect(await state()).toBe('awaiting_approval');

    await env.broker.decide(second.approvalId, 'deny', false, who);
    expect(await two).toMatchObject({ behavior: 'deny', kind: 'person' });
    expect(await state()).toBe('running');
  });
});

describe('a subagent’s permission seam', () => {
  it('never runs above the turn’s mode, and its asks name the subagent', async () => {
    env.setup({ settings: baseSettings({ agents: new Map([['default', { mode: 'plan', rules: { allow: [], ask: [], deny: [] } }]]) }) });
    const member = await env.principal('member');
    const turn = await env.turn({ principalId: member });
    expect(turn.policy.mode).toBe('plan');
    // A type asking for acceptEdits still runs in plan under a parent in plan.
    const sub = turn.policy.forSubagent!({ label: 'general: write', mode: 'acceptEdits' });
    expect(sub.mode).toBe('plan');
    expect(await sub.canUseTool(writeFile, { path: 'a.txt', content: 'x' }, turn.toolCtx('toolu_w'))).toMatchObject({ behavior: 'deny', kind: 'mode' });
  });

  it('a lower type mode applies, and an ask is shown with the subagent and its task', async () => {
    env.setup();
    const member = await env.principal('member');
    const turn = await env.turn({ principalId: member });
    expect(turn.policy.forSubagent!({ label: 'x: y', mode: 'dontAsk' }).mode).toBe('dontAsk');
    // The fixture's scrubber masks `hunter2`, in the subagent's label too.
    const sub = turn.policy.forSubagent!({ label: 'researcher: mail the team hunter2' });
    const requested = turn.next('approval_requested');
    const decision = sub.canUseTool(sendMail, { to: 'team@example.com' }, turn.toolCtx('toolu_sub'));
    const ev = await requested;
    if (ev.type !== 'approval_requested') throw new Error('unreachable');
    expect(ev.summary.startsWith('🤖 researcher: mail the team [secret] — mcp__mail__send')).toBe(true);
    await env.broker.decide(ev.approvalId, 'deny', false, { kind: 'principal', principalId: member, role: 'member' });
    expect(await decision).toMatchObject({ behavior: 'deny', kind: 'person' });
  });
});

describe('the task tool in the pipeline', () => {
  const task = createTaskTool([{ name: 'general', description: 'everything' }]);
  const call = { description: 'd', prompt: 'p' };

  it('runs without asking, also in plan mode', async () => {
    env.setup({ settings: baseSettings({ agents: new Map([['default', { mode: 'plan', rules: { allow: [], ask: [], deny: [] } }]]) }) });
    const turn = await env.turn({ principalId: await env.principal('member'), agentTools: [...TOOLS, task] });
    expect(turn.policy.tools.map((t) => t.name)).toContain('task');
    expect(await turn.policy.canUseTool(task, call, turn.toolCtx('toolu_t'))).toEqual({ behavior: 'allow' });
  });

  it('a deny rule on task hides it and denies an invented call', async () => {
    env.setup({ settings: baseSettings({ rules: { allow: [], ask: [], deny: ['task'] } }) });
    const turn = await env.turn({ principalId: await env.principal('owner'), agentTools: [...TOOLS, task] });
    expect(turn.policy.tools.map((t) => t.name)).not.toContain('task');
    expect(await turn.policy.canUseTool(task, call, turn.toolCtx('toolu_t'))).toMatchObject({ behavior: 'deny', kind: 'rule' });
  });

  it('a content rule on task matches the subagent type', async () => {
    env.setup({ settings: baseSettings({ rules: { allow: [], ask: [], deny: ['task(researcher)'] } }) });
    const typed = await env.turn({ principalId: await env.principal('owner'), agentTools: [...TOOLS, task] });
    expect(await typed.policy.canUseTool(task, { ...call, type: 'researcher' }, typed.toolCtx('toolu_r'))).toMatchObject({ behavior: 'deny', kind: 'rule' });
    expect(await typed.policy.canUseTool(task, call, typed.toolCtx('toolu_g'))).toEqual({ behavior: 'allow' });
  });
});
