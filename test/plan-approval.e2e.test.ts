import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from '@switchboard/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { collectTurn, connectPerson, isEnd, personWorkspace, toolResultFor, useGateway } from './helpers.js';

// Every automatic path that could answer a plan approval is configured to try: a PermissionRequest
// hook and a PreToolUse hook that allow exit_plan_mode, and an allow rule for it. None may decide it.
const dir = mkdtempSync(join(tmpdir(), 'swb-plan-'));
const permissionRequest = join(dir, 'permission-request.mjs');
writeFileSync(
  permissionRequest,
  `let raw = ''; process.stdin.on('data', (d) => (raw += d)); process.stdin.on('end', () => { const p = JSON.parse(raw); if (p.toolName === 'exit_plan_mode') process.stdout.write(JSON.stringify({ decision: 'allow', reason: 'the hook approves every plan' })); });`,
);
const preToolUse = join(dir, 'pre-tool-use.mjs');
writeFileSync(
  preToolUse,
  `let raw = ''; process.stdin.on('data', (d) => (raw += d)); process.stdin.on('end', () => process.stdout.write(JSON.stringify({ decision: 'allow', reason: 'the hook allows plans' })));`,
);

const env = useGateway({
  config: () => ({
    // The broader scopes allow acceptEdits, so a plan approval offers both default and acceptEdits.
    agents: { default: { mode: 'acceptEdits' } },
    permissions: { allow: ['exit_plan_mode'] },
    hooks: {
      PermissionRequest: [{ type: 'command', command: [process.execPath, permissionRequest] }],
      PreToolUse: [{ type: 'command', matcher: 'exit_plan_mode', command: [process.execPath, preToolUse] }],
    },
  }),
  client: true,
});

type Frame = Record<string, unknown>;
const token = () => env.gw.credentials().operatorToken;
let workspace: string;

beforeAll(() => {
  workspace = personWorkspace(env.gw);
});

async function setMode(mode: string): Promise<void> {
  env.ws.send({ type: 'mode', mode });
  expect(await env.ws.next((f) => f.type === 'mode_ok' || f.type === 'error')).toEqual({ type: 'mode_ok', mode });
}

/** Starts a turn whose first model reply calls exit_plan_mode with `plan`, then `then`; returns the plan's approval frame. */
async function presentPlan(id: string, plan: string, ...then: Parameters<typeof env.fake.enqueue>): Promise<Frame> {
  env.fake.enqueue({ toolUses: [{ name: 'exit_plan_mode', input: { plan }, id: `toolu_plan_${id}` }] }, ...then);
  env.ws.send({ type: 'message', clientId: id, text: `plan ${id}` });
  return env.ws.next((f) => f.type === 'approval_request' && f.clientId === id);
}

async function approvalRow(id: string): Promise<Frame> {
  const res = await api(env.gw, 'GET', '/api/v1/approvals?limit=100', { token: token() });
  const row = (res.json.approvals as Frame[]).find((a) => a.id === id);
  if (!row) throw new Error(`approval ${id} is not listed`);
  return row;
}

async function sessionMode(): Promise<unknown> {
  const res = await api(env.gw, 'GET', '/api/v1/sessions?channel=websocket', { token: token() });
  const open = (res.json.sessions as Array<{ endedAt: string | null; settings: { mode?: string } }>).find((s) => s.endedAt === null);
  return open?.settings.mode;
}

const toolNames = (i: number) => (env.fake.requests[i]?.body.tools ?? []).map((t) => t.name);

describe('plan approval (exit_plan_mode) over WebSocket', () => {
  it('outside plan mode exit_plan_mode is not offered', async () => {
    const before = env.fake.requests.length;
    env.fake.enqueue({ text: 'hi' });
    env.ws.send({ type: 'message', clientId: 'p0', text: 'hello' });
    await collectTurn(env.ws, 'p0');
    expect(toolNames(before)).toContain('write_file');
    expect(toolNames(before)).not.toContain('exit_plan_mode');
  });

  it('approving switches the session to default; the next write asks as usual; no hook, rule or "always allow" answers it', async () => {
    await setMode('plan');
    const before = env.fake.requests.length;
    const plan = '1. Write after.txt with the summary.\n2. Nothing else.';
    const req = await presentPlan(
      'p1',
      plan,
      { toolUses: [{ name: 'write_file', input: { path: 'after.txt', content: 'x' }, id: 'toolu_w_p1' }] },
      { text: 'done p1' },
    );
    expect(toolNames(before)).toContain('exit_plan_mode');
    expect(req).toMatchObject({ tool: 'exit_plan_mode', source: 'plan', choices: ['default', 'acceptEdits'] });
    expect(String(req.summary)).toContain('Proceed with this plan?');
    expect(String(req.summary)).toContain('1. Write after.txt with the summary.');
    // The broker hands the PermissionRequest hook nothing: it says the approval waits for a person.
    await env.gw.waitForLog((l) => l.includes('automatic responders may not answer') && l.includes(req.approvalId as string));

    // Attack: "always allow" cannot save a rule from a plan, through the control API or the chat.
    const rulesBefore = (await api(env.gw, 'GET', '/api/v1/rules', { token: token() })).json;
    const always = await api(env.gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, { token: token(), body: { decision: 'allow', always: true } });
    expect(always.status).toBe(400);
    expect(always.text).toMatch(/cannot be always allowed/);
    env.ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow', always: true });
    expect(await env.ws.next((f) => f.type === 'approval_result' && f.approvalId === req.approvalId)).toMatchObject({ outcome: 'invalid' });
    // A mode the approval does not offer is refused too.
    const bypass = await api(env.gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, {
      token: token(),
      body: { decision: 'allow', mode: 'bypassPermissions' },
    });
    expect(bypass.status).toBe(400);
    expect(bypass.text).toMatch(/choose one of: default, acceptEdits/);
    expect(await approvalRow(req.approvalId as string)).toMatchObject({ status: 'pending' });

    env.ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow', mode: 'default' });
    expect(await env.ws.next((f) => f.type === 'approval_result' && f.approvalId === req.approvalId)).toMatchObject({
      outcome: 'decided',
      status: 'allowed',
      choice: 'default',
    });
    // The write that follows in the same turn asks as usual (default mode), from the mode step.
    const write = await env.ws.next((f) => f.type === 'approval_request' && f.clientId === 'p1');
    expect(write).toMatchObject({ tool: 'write_file', source: 'mode' });
    env.ws.send({ type: 'approve', approvalId: write.approvalId, decision: 'allow' });
    const end = await env.ws.next((f) => isEnd(f) && f.clientId === 'p1');
    expect(end).toMatchObject({ type: 'final', text: 'done p1' });
    expect(existsSync(join(workspace, 'after.txt'))).toBe(true);

    const result = toolResultFor(env.fake, 'toolu_plan_p1');
    expect(result.is_error).toBeFalsy();
    expect(String(result.content)).toMatch(/approved the plan.*now in default mode/);
    const row = await approvalRow(req.approvalId as string);
    expect(row).toMatchObject({ source: 'plan', status: 'allowed', always: false, choice: 'default', choices: ['default', 'acceptEdits'] });
    expect(row.decidedBy).toMatch(/^principal:/);
    expect((await api(env.gw, 'GET', '/api/v1/rules', { token: token() })).json).toEqual(rulesBefore);
    // Stored as the session's mode setting (the one /mode sets), and audited.
    expect(await sessionMode()).toBe('default');
    const audit = await api(env.gw, 'GET', '/api/v1/audit?action=session.mode&limit=5', { token: token() });
    expect((audit.json.entries as Frame[])[0]).toMatchObject({ detail: { mode: 'default', via: 'plan', approvalId: req.approvalId } });

    // The next turn is in default mode: no exit_plan_mode, and a write asks again.
    const next = env.fake.requests.length;
    env.fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'later.txt', content: 'y' }, id: 'toolu_w_p1b' }] }, { text: 'done p1b' });
    env.ws.send({ type: 'message', clientId: 'p1b', text: 'write later' });
    const later = await env.ws.next((f) => f.type === 'approval_request' && f.clientId === 'p1b');
    expect(later).toMatchObject({ tool: 'write_file', source: 'mode' });
    expect(toolNames(next)).not.toContain('exit_plan_mode');
    env.ws.send({ type: 'approve', approvalId: later.approvalId, decision: 'deny' });
    await env.ws.next((f) => isEnd(f) && f.clientId === 'p1b');
    expect(existsSync(join(workspace, 'later.txt'))).toBe(false);
  });

  it('denying keeps plan mode, tells the model why and to keep planning; the next write is refused by plan mode', async () => {
    await setMode('plan');
    const req = await presentPlan(
      'p2',
      'Delete everything.',
      { toolUses: [{ name: 'write_file', input: { path: 'denied.txt', content: 'x' }, id: 'toolu_w_p2' }] },
      { text: 'done p2' },
    );
    const denied = await api(env.gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, {
      token: token(),
      body: { decision: 'deny', reason: 'too risky, keep the files' },
    });
    expect(denied.status).toBe(200);
    const end = await env.ws.next((f) => isEnd(f) && f.clientId === 'p2');
    expect(end).toMatchObject({ type: 'final', text: 'done p2' });
    const planResult = toolResultFor(env.fake, 'toolu_plan_p2');
    expect(planResult.is_error).toBe(true);
    expect(String(planResult.content)).toContain('too risky, keep the files');
    expect(String(planResult.content)).toMatch(/stays in plan mode: keep planning/);
    const write = toolResultFor(env.fake, 'toolu_w_p2');
    expect(write.is_error).toBe(true);
    expect(String(write.content)).toMatch(/plan mode/);
    expect(existsSync(join(workspace, 'denied.txt'))).toBe(false);
    expect(await sessionMode()).toBe('plan');
  });

  it('approving with acceptEdits lets the next workspace write run without asking', async () => {
    await setMode('plan');
    const req = await presentPlan(
      'p3',
      'Write edits.txt.',
      { toolUses: [{ name: 'write_file', input: { path: 'edits.txt', content: 'x' }, id: 'toolu_w_p3' }] },
      { text: 'done p3' },
    );
    env.ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow', mode: 'acceptEdits' });
    const turn = await collectTurn(env.ws, 'p3');
    expect(turn.frames.filter((f) => f.type === 'approval_request')).toEqual([]);
    expect(turn.end).toMatchObject({ type: 'final', text: 'done p3' });
    expect(existsSync(join(workspace, 'edits.txt'))).toBe(true);
    expect(String(toolResultFor(env.fake, 'toolu_plan_p3').content)).toMatch(/now in acceptEdits mode/);
    expect(await sessionMode()).toBe('acceptEdits');
  });

  it('a guest (role ceiling default) is offered default only: acceptEdits is refused even from an operator', async () => {
    const guest = await connectPerson(env.gw, 'gina', 'guest');
    guest.ws.send({ type: 'mode', mode: 'plan' });
    expect(await guest.ws.next((f) => f.type === 'mode_ok' || f.type === 'error')).toEqual({ type: 'mode_ok', mode: 'plan' });
    env.fake.enqueue({ toolUses: [{ name: 'exit_plan_mode', input: { plan: 'guest plan' }, id: 'toolu_plan_g1' }] }, { text: 'done g1' });
    guest.ws.send({ type: 'message', clientId: 'g1', text: 'plan' });
    const req = await guest.ws.next((f) => f.type === 'approval_request' && f.clientId === 'g1');
    expect(req).toMatchObject({ source: 'plan', choices: ['default'] });
    const raised = await api(env.gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, {
      token: token(),
      body: { decision: 'allow', mode: 'acceptEdits' },
    });
    expect(raised.status).toBe(400);
    expect(raised.text).toMatch(/choose one of: default/);
    expect((await api(env.gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, { token: token(), body: { decision: 'allow' } })).status).toBe(200);
    expect(await guest.ws.next((f) => isEnd(f) && f.clientId === 'g1')).toMatchObject({ type: 'final', text: 'done g1' });
    expect(String(toolResultFor(env.fake, 'toolu_plan_g1').content)).toMatch(/now in default mode/);
    guest.ws.close();
  });

  it('plan mode set for the person (a broader scope than the session): exit_plan_mode is not offered, and an invented call is refused', async () => {
    const principalId = env.gw.credentials().principalId;
    await setMode('default');
    expect((await api(env.gw, 'PUT', `/api/v1/principals/${principalId}/mode`, { token: token(), body: { mode: 'plan' } })).status).toBe(200);
    const before = env.fake.requests.length;
    env.fake.enqueue({ toolUses: [{ name: 'exit_plan_mode', input: { plan: 'let me out' }, id: 'toolu_plan_p4' }] }, { text: 'done p4' });
    env.ws.send({ type: 'message', clientId: 'p4', text: 'try to leave' });
    const turn = await collectTurn(env.ws, 'p4');
    expect(turn.frames.filter((f) => f.type === 'approval_request')).toEqual([]);
    expect(toolNames(before)).not.toContain('exit_plan_mode');
    expect(toolNames(before)).toContain('read_file');
    const result = toolResultFor(env.fake, 'toolu_plan_p4');
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toMatch(/no tool named "exit_plan_mode"/);
    expect((await api(env.gw, 'PUT', `/api/v1/principals/${principalId}/mode`, { token: token(), body: { mode: null } })).status).toBe(200);
  });
});
