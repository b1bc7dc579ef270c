import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { setPrincipalMode, workspaceDir, type HookDefinition } from '../../src/index.js';
import { fileTool, readFile, sendMail, writeFile } from '../permissions/fixtures.js';
import { TOOLS, baseSettings, boundaryPolicy, usePolicy } from './fixture.js';

const env = usePolicy();
const names = (tools: { name: string }[]) => tools.map((t) => t.name);

/** A command hook running `script` with node; the script's stdout is its opinion. `payload` is the parsed stdin. */
const nodeHook = (script: string): HookDefinition => ({
  type: 'command',
  command: [process.execPath, '-e', `let s='';process.stdin.on('data',(c)=>s+=c).on('end',()=>{const payload=JSON.parse(s);${script}})`],
});

describe('PolicyService.forTurn: the tools offered', () => {
  it("offers the agent's tools minus those a content-less deny hides, group rules expanded by the registry", async () => {
    env.setup({ settings: baseSettings({ rules: { allow: [], ask: [], deny: ['group:mcp', 'edit_file', 'write_file(secret/**)'] } }) });
    const owner = await env.principal('owner');
    const { policy } = await env.turn({ principalId: owner });
    // A content deny (write_file(secret/**)) leaves the tool visible: other calls may pass.
    expect(names(policy.tools)).toEqual(['read_file', 'list_files', 'search_files', 'write_file']);
  });

  it("an agent's rules apply to that agent only", async () => {
    const agents = new Map([
      ['default', { mode: 'default' as const, rules: { allow: [], ask: [], deny: ['write_file'] } }],
      ['other', { mode: 'default' as const, rules: { allow: [], ask: [], deny: ['read_file'] } }],
    ]);
    env.setup({ settings: baseSettings({ agents }) });
    const { policy } = await env.turn({ principalId: await env.principal('member') });
    expect(names(policy.tools)).toEqual(names(TOOLS.filter((t) => t.name !== 'write_file')));
  });

  it("a room's denyTools are hidden and refused in that room only", async () => {
    const boundary = new Map([['websocket:default', boundaryPolicy({ lab: { requireMention: false, allowFrom: [], denyTools: ['group:fs'] } })]]);
    env.setup({ boundary });
    const member = await env.principal('member');
    const inRoom = await env.turn({ principalId: member, room: 'lab' });
    expect(names(inRoom.policy.tools)).toEqual(['mcp__mail__send']);
    expect(await inRoom.policy.canUseTool(readFile, { path: 'a.txt' }, inRoom.toolCtx())).toMatchObject({ behavior: 'deny', kind: 'rule' });
    const elsewhere = await env.turn({ principalId: member, room: 'hall' });
    expect(names(elsewhere.policy.tools)).toEqual(names(TOOLS));
  });

  it('a room sender without a principal gets no file tools, no workspace, and a refusal if one is called anyway', async () => {
    env.setup();
    const { policy, toolCtx } = await env.turn({ room: 'lab' });
    expect(names(policy.tools)).toEqual(['mcp__mail__send']);
    expect(policy.workspace).toBe(join(env.root, 'default', 'no-workspace'));
    expect(existsSync(policy.workspace ?? '')).toBe(false);
    const decision = await policy.canUseTool(readFile, { path: 'a.txt' }, toolCtx());
    expect(decision).toMatchObject({ behavior: 'deny', kind: 'rule', reason: expect.stringContaining('file tools are not available to this sender') });
  });
});

describe('PolicyService.forTurn: a sender without a workspace and exec', () => {
  it('is never offered exec, even where operators offer it to guests, and a call is refused', async () => {
    const exec = { ...fileTool('exec', false), name: 'exec' };
    env.setup({ offeredTo: new Map([['exec', ['owner', 'admin', 'member', 'guest']]]) });
    const { policy, toolCtx } = await env.turn({ room: 'lab', agentTools: [...TOOLS, exec] });
    expect(names(policy.tools)).toEqual(['mcp__mail__send']);
    const decision = await policy.canUseTool(exec, { command: 'ls' }, toolCtx());
    expect(decision).toMatchObject({ behavior: 'deny', reason: expect.stringContaining('not available to this sender') });
  });
});

describe('PolicyService.forTurn: decisions', () => {
  it('deny wins over allow, whatever the order; every decision is audited with the mode', async () => {
    env.setup({ settings: baseSettings({ rules: { allow: ['write_file'], ask: [], deny: ['write_file(secret/**)'] } }) });
    const { policy, toolCtx } = await env.turn({ principalId: await env.principal('member') });
    expect(await policy.canUseTool(writeFile, { path: 'secret/key.txt' }, toolCtx('toolu_a'))).toMatchObject({ behavior: 'deny', kind: 'rule' });
    expect(await policy.canUseTool(writeFile, { path: 'notes/a.txt', content: 'hunter2' }, toolCtx('toolu_b'))).toEqual({ behavior: 'allow' });
    const audit = (await env.storage.audit.list({ action: 'permission.decision' })).map((e) => e.detail as Record<string, unknown>);
    expect(audit).toHaveLength(2);
    expect(audit).toContainEqual(
      expect.objectContaining({ tool: 'write_file', behavior: 'deny', decidedBy: 'rule', rule: 'write_file(secret/**)', mode: 'default' }),
    );
    // The summary in the audit log is scrubbed.
    expect(audit).toContainEqual(expect.objectContaining({ behavior: 'allow', summary: expect.stringContaining('[secret]') }));
    expect(JSON.stringify(audit)).not.toContain('hunter2');
  });

  it.each([
    ['plan', 'deny'],
    ['acceptEdits', 'allow'],
  ] as const)("the agent's mode decides a workspace write without a rule: %s → %s", async (mode, behavior) => {
    env.setup({ settings: baseSettings({ agents: new Map([['default', { mode, rules: { allow: [], ask: [], deny: [] } }]]) }) });
    const { policy, toolCtx } = await env.turn({ principalId: await env.principal('member') });
    expect(await policy.canUseTool(writeFile, { path: 'a.txt' }, toolCtx())).toMatchObject({ behavior });
  });

  it('an ask becomes an approval: the request event names the approval, the turn waits, the decision resolves it', async () => {
    env.setup();
    const member = await env.principal('member');
    const turn = await env.turn({ principalId: member });
    const requested = turn.next('approval_requested');
    const decision = turn.policy.canUseTool(sendMail, { to: 'a@example.com' }, turn.toolCtx('toolu_mail'));
    const ev = await requested;
    if (ev.type !== 'approval_requested') throw new Error('unreachable');
    expect(ev).toMatchObject({ toolUseId: 'toolu_mail', name: 'mcp__mail__send', source: 'mode' });
    expect(await env.storage.approvals.get(ev.approvalId)).toMatchObject({ status: 'pending', requesterPrincipalId: member, toolUseId: 'toolu_mail' });
    expect((await env.storage.turns.get(turn.ctx.turn.id))?.state).toBe('awaiting_approval');
    const resolved = turn.next('approval_resolved');
    expect(await env.broker.decide(ev.approvalId, 'allow', false, { kind: 'principal', principalId: member, role: 'member' })).toMatchObject({
      outcome: 'decided',
    });
    expect(await decision).toEqual({ behavior: 'allow' });
    expect(await resolved).toEqual({ type: 'approval_resolved', approvalId: ev.approvalId, toolUseId: 'toolu_mail', allowed: true, by: `principal:${member}` });
    expect((await env.storage.turns.get(turn.ctx.turn.id))?.state).toBe('running');
  });

  it('a declined approval is a person denial', async () => {
    env.setup();
    const member = await env.principal('member');
    const turn = await env.turn({ principalId: member });
    const requested = turn.next('approval_requested');
    const decision = turn.policy.canUseTool(sendMail, { to: 'b@example.com' }, turn.toolCtx());
    const ev = await requested;
    if (ev.type !== 'approval_requested') throw new Error('unreachable');
    await env.broker.decide(ev.approvalId, 'deny', false, { kind: 'principal', principalId: member, role: 'member' }, 'no mail today');
    expect(await decision).toEqual({ behavior: 'deny', reason: 'no mail today', kind: 'person' });
  });

  it('consecutive denials past the limit stop the turn once', async () => {
    env.setup({ settings: baseSettings({ rules: { allow: [], ask: [], deny: ['write_file(secret/**)'] } }) });
    const { policy, toolCtx } = await env.turn({ principalId: await env.principal('member') });
    expect(policy.shouldStop?.()).toBeNull();
    for (let i = 0; i < 3; i++) await policy.canUseTool(writeFile, { path: `secret/${i}` }, toolCtx(`toolu_${i}`));
    expect(policy.shouldStop?.()).toEqual({ reason: 'denial_limit', error: expect.stringContaining('3 tool calls in a row were denied') });
    expect(policy.shouldStop?.()).toBeNull();
  });
});

describe('PolicyService.forTurn: hooks', () => {
  it('a UserPromptSubmit hook refuses the prompt; it is sent the typed payload', async () => {
    const refuse = nodeHook(
      `process.stdout.write(JSON.stringify({decision:'deny',reason:payload.hookEvent+' '+payload.prompt+' '+(payload.turnId?'with-turn':'no-turn')}))`,
    );
    env.setup({ hooks: { UserPromptSubmit: [refuse] } });
    const { policy } = await env.turn({ principalId: await env.principal('member'), text: 'delete everything' });
    expect(await policy.beforeTurn?.()).toBe('Your message was not processed: UserPromptSubmit delete everything with-turn.');
  });

  it('a prompt no hook refuses goes through; without hooks there are no hook callbacks', async () => {
    env.setup({ hooks: { UserPromptSubmit: [nodeHook(`process.stdout.write('{}')`)] } });
    const withHook = await env.turn({ principalId: await env.principal('member') });
    expect(await withHook.policy.beforeTurn?.()).toBeUndefined();
    expect(withHook.policy.afterTool).toBeUndefined();
    expect(withHook.policy.afterTurn).toBeUndefined();
  });

  it('a PermissionRequest hook answers a mode ask (the approval is decided by the hook)', async () => {
    env.setup({
      hooks: { PermissionRequest: [nodeHook(`process.stdout.write(JSON.stringify({decision:payload.toolName==='mcp__mail__send'?'allow':'deny'}))`)] },
    });
    const turn = await env.turn({ principalId: await env.principal('member') });
    const resolved = turn.next('approval_resolved');
    expect(await turn.policy.canUseTool(sendMail, { to: 'c@example.com' }, turn.toolCtx())).toEqual({ behavior: 'allow' });
    expect(await resolved).toMatchObject({ allowed: true, by: 'hook:PermissionRequest' });
  });

  it("a PostToolUse hook's additionalContext goes to the model", async () => {
    env.setup({
      hooks: { PostToolUse: [nodeHook(`process.stdout.write(JSON.stringify({additionalContext:'saw '+payload.toolName+' '+payload.toolResult}))`)] },
    });
    const turn = await env.turn({ principalId: await env.principal('member') });
    const extra = await turn.policy.afterTool?.({ tool: readFile, input: { path: 'a' }, result: { content: 'ok' }, ctx: turn.toolCtx() });
    expect(extra).toBe('saw read_file ok');
  });
});

describe('PolicyService.forTurn: workspaces', () => {
  it("a person's DMs work in that person's directory, a room in the room's (created on first use)", async () => {
    env.setup();
    const member = await env.principal('member');
    const dm = await env.turn({ principalId: member });
    expect(dm.policy.workspace).toBe(workspaceDir(env.root, 'default', 'per-person', { kind: 'person', principalId: member }));
    const room = await env.turn({ principalId: member, room: 'lab' });
    expect(room.policy.workspace).toBe(
      workspaceDir(env.root, 'default', 'per-person', { kind: 'room', channel: 'websocket', account: 'default', conversation: 'lab' }),
    );
    expect(room.policy.workspace).not.toBe(dm.policy.workspace);
    expect(existsSync(dm.policy.workspace ?? '')).toBe(true);
    expect(existsSync(room.policy.workspace ?? '')).toBe(true);
  });

  it('a shared agent works in one directory for everyone', async () => {
    env.setup({ workspaceMode: 'shared' });
    const a = await env.turn({ principalId: await env.principal('member') });
    const b = await env.turn({ principalId: await env.principal('owner'), room: 'lab' });
    expect(a.policy.workspace).toBe(b.policy.workspace);
  });
});

describe('PolicyService: modes', () => {
  it('the mode is the least trusted of the scopes: agent, channel account, room, principal, session', async () => {
    const boundary = new Map([
      ['websocket:default', boundaryPolicy({ lab: { requireMention: false, allowFrom: [], denyTools: [], mode: 'plan' } }, 'acceptEdits')],
    ]);
    env.setup({ boundary, settings: baseSettings({ agents: new Map([['default', { mode: 'bypassPermissions', rules: { allow: [], ask: [], deny: [] } }]]) }) });
    const owner = await env.principal('owner');
    const { ctx } = await env.turn({ principalId: owner });
    const context = await env.service.sessionContext(ctx.session);
    expect(context.role).toBe('owner');
    // The channel's acceptEdits caps the agent's bypassPermissions.
    expect(await env.service.modeFor(context)).toBe('acceptEdits');
    await setPrincipalMode(env.storage, owner, 'default', 'operator:ops');
    expect(await env.service.modeFor(context)).toBe('default');
    // In the plan room, plan.
    expect(await env.service.modeFor({ ...context, conversation: { channel: 'websocket', account: 'default', id: 'lab', kind: 'room' } })).toBe('plan');
    // A session's own setting can only lower it further.
    const session = await env.storage.sessions.updateSettings(ctx.session.id, { mode: 'plan' });
    expect(await env.service.modeFor({ ...context, session })).toBe('plan');
  });

  it('checkModeChange: at most the role ceiling and what the broader scopes give; unknown modes are named', async () => {
    env.setup({ settings: baseSettings({ agents: new Map([['default', { mode: 'acceptEdits', rules: { allow: [], ask: [], deny: [] } }]]) }) });
    const { ctx } = await env.turn({ principalId: await env.principal('member') });
    const context = await env.service.sessionContext(ctx.session);
    expect(await env.service.checkModeChange(context, 'plan')).toEqual({ ok: true, mode: 'plan' });
    expect(await env.service.checkModeChange(context, 'acceptEdits')).toEqual({ ok: true, mode: 'acceptEdits' });
    expect(await env.service.checkModeChange(context, 'bypassPermissions')).toEqual({ ok: false, reason: 'the member role may use at most acceptEdits mode' });
    expect(await env.service.checkModeChange(context, 'yolo')).toMatchObject({ ok: false, reason: expect.stringContaining('unknown mode "yolo"') });
    // A gateway-wide default caps what a session may take.
    env.settings.set(baseSettings({ mode: 'default', agents: new Map([['default', { mode: 'acceptEdits', rules: { allow: [], ask: [], deny: [] } }]]) }));
    expect(await env.service.checkModeChange(context, 'acceptEdits')).toMatchObject({ ok: false, reason: expect.stringContaining('at most default mode') });
  });

  it('a session mode above the broader mode is an audited grant', async () => {
    env.setup();
    const member = await env.principal('member');
    const { ctx } = await env.turn({ principalId: member });
    const session = await env.storage.sessions.updateSettings(ctx.session.id, { mode: 'acceptEdits' });
    await env.service.sessionModeSet(await env.service.sessionContext(session), 'acceptEdits', `principal:${member}`);
    expect((await env.storage.audit.list({ action: 'grant.created' })).map((e) => e.detail)).toEqual([
      expect.objectContaining({ kind: 'mode', mode: 'acceptEdits', above: 'default' }),
    ]);
  });
});

describe('PolicyService: settings follow reloads', () => {
  it('new settings apply once the rule cache is dropped (invalidateRules), as the wiring does after a reload', async () => {
    const service = env.setup();
    const member = await env.principal('member');
    expect(names((await env.turn({ principalId: member })).policy.tools)).toContain('write_file');
    env.settings.set(baseSettings({ rules: { allow: [], ask: [], deny: ['write_file'] } }));
    service.invalidateRules();
    expect(names((await env.turn({ principalId: member })).policy.tools)).not.toContain('write_file');
    // Role ceilings and modes are read on every use, without a cache.
    env.settings.set(baseSettings({ roleCeilings: { owner: 'plan', admin: 'plan', member: 'plan', guest: 'plan' } }));
    const { ctx } = await env.turn({ principalId: member });
    expect(await service.modeFor(await service.sessionContext(ctx.session))).toBe('plan');
  });
});
