/**
 * `exec` through the real gateway, real bubblewrap and the fake model: who is offered it, what runs
 * without asking, what asks, and what the modes do (issue 14, acceptance 1 and 4).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { api, connectWs, runCli, type WsClient } from '@switchboard/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, collectTurn, personWorkspace, toolResultFor, useGateway } from './helpers.js';

const env = useGateway({ client: true });
type Body = { tools?: Array<{ name: string }> };
const toolsOf = (i: number) => ((env.fake.requests[i]?.body as Body | undefined)?.tools ?? []).map((t) => t.name);

async function person(name: string, role: string): Promise<{ ws: WsClient; principalId: string }> {
  const r = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', name, '--role', role], { gateway: env.gw })).stdout) as {
    secret: string;
    principalId: string;
  };
  const ws = await connectWs(env.gw.wsUrl, { headers: bearer(r.secret) });
  await ws.next((f) => f.type === 'hello_ok');
  return { ws, principalId: r.principalId };
}

/** Sets the owner's session mode (`/mode` through the WebSocket command frame). */
async function setMode(ws: WsClient, clientId: string, mode: string): Promise<void> {
  ws.send({ type: 'message', clientId, text: `/mode ${mode}` });
  await collectTurn(ws, clientId);
}

let workspace: string;
beforeAll(async () => {
  await env.ws.next((f) => f.type === 'hello_ok');
  workspace = personWorkspace(env.gw);
});

describe('exec for the owner in default mode', () => {
  it('runs a command whose every part only reads without asking, and returns the output and the listing', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    fake.enqueue({ toolUses: [{ name: 'exec', input: { command: 'echo hi && ls -a' }, id: 'toolu_r1' }] }, { text: 'Listed.' });
    const turn = await (async () => {
      ws.send({ type: 'message', clientId: 'r1', text: 'list' });
      return collectTurn(ws, 'r1');
    })();
    expect(turn.frames.some((f) => f.type === 'approval_request')).toBe(false);
    expect(turn.end).toMatchObject({ type: 'final', text: 'Listed.' });
    expect(toolsOf(start)).toContain('exec');
    const result = toolResultFor(fake, 'toolu_r1');
    expect(result.is_error).toBeFalsy();
    expect(result.content).toMatch(/^Exit code 0 · /);
    expect(result.content).toContain('\nhi\n');
    // The listing: the workspace's protected files exist (created empty so they can be bound read-only).
    expect(result.content).toContain('AGENTS.md');
  });

  it('asks before `touch a`, and runs it once approved', async () => {
    const { fake, ws } = env;
    fake.enqueue({ toolUses: [{ name: 'exec', input: { command: 'touch a', description: 'create a' }, id: 'toolu_t1' }] }, { text: 'Touched.' });
    ws.send({ type: 'message', clientId: 't1', text: 'touch it' });
    const req = await ws.next((f) => f.type === 'approval_request' && f.clientId === 't1');
    expect(req).toMatchObject({ tool: 'exec', source: 'mode' });
    expect(req.summary).toContain('touch a');
    expect(existsSync(join(workspace, 'a'))).toBe(false);
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
    const turn = await collectTurn(ws, 't1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'Touched.' });
    expect(toolResultFor(fake, 'toolu_t1').content).toMatch(/^Exit code 0 · /);
    expect(existsSync(join(workspace, 'a'))).toBe(true);
  });
});

describe('exec and the roles', () => {
  it('a member is never offered exec, an admin is; an operator can switch it on for that member', async () => {
    const { fake, gw } = env;
    const member = await person('exec-member', 'member');
    const admin = await person('exec-admin', 'admin');
    let start = fake.requests.length;
    member.ws.send({ type: 'message', clientId: 'm1', text: 'hello' });
    await collectTurn(member.ws, 'm1');
    expect(toolsOf(start)).not.toContain('exec');
    expect(toolsOf(start)).toContain('read_file');
    start = fake.requests.length;
    admin.ws.send({ type: 'message', clientId: 'a1', text: 'hello' });
    await collectTurn(admin.ws, 'a1');
    expect(toolsOf(start)).toContain('exec');

    // A member who calls exec anyway (a model inventing it) gets an unknown-tool error: nothing runs.
    fake.enqueue({ toolUses: [{ name: 'exec', input: { command: 'echo sneaky' }, id: 'toolu_m2' }] }, { text: 'ok' });
    member.ws.send({ type: 'message', clientId: 'm2', text: 'try' });
    await collectTurn(member.ws, 'm2');
    const refused = toolResultFor(fake, 'toolu_m2');
    expect(refused.is_error).toBe(true);
    expect(refused.content).not.toContain('sneaky\n');

    const { operatorToken } = gw.credentials();
    const on = await api(gw, 'PUT', '/api/v1/capabilities/exec', {
      token: operatorToken,
      body: { scope: { kind: 'principal', id: member.principalId }, enabled: true },
    });
    expect(on.status).toBe(200);
    start = fake.requests.length;
    member.ws.send({ type: 'message', clientId: 'm3', text: 'hello again' });
    await collectTurn(member.ws, 'm3');
    expect(toolsOf(start)).toContain('exec');
    member.ws.close();
    admin.ws.close();
  });
});

describe('exec and the modes', () => {
  it('`rm -rf .` asks even under bypassPermissions (a safety ask), and nothing is removed while it waits', async () => {
    const { fake, ws } = env;
    await setMode(ws, 'b0', 'bypassPermissions');
    fake.enqueue({ toolUses: [{ name: 'exec', input: { command: 'rm -rf .' }, id: 'toolu_b1' }] }, { text: 'Not removed.' });
    ws.send({ type: 'message', clientId: 'b1', text: 'wipe' });
    const req = await ws.next((f) => f.type === 'approval_request' && f.clientId === 'b1');
    expect(req).toMatchObject({ tool: 'exec', source: 'safety' });
    expect(existsSync(join(workspace, 'a'))).toBe(true);
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'deny' });
    const turn = await collectTurn(ws, 'b1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'Not removed.' });
    expect(existsSync(join(workspace, 'a'))).toBe(true);
    // Without an objection bypassPermissions runs an edit without asking.
    fake.enqueue({ toolUses: [{ name: 'exec', input: { command: 'touch bypassed' }, id: 'toolu_b2' }] }, { text: 'Done.' });
    ws.send({ type: 'message', clientId: 'b2', text: 'touch' });
    const done = await collectTurn(ws, 'b2');
    expect(done.frames.some((f) => f.type === 'approval_request')).toBe(false);
    expect(existsSync(join(workspace, 'bypassed'))).toBe(true);
  });

  it('in plan mode only read-only commands run', async () => {
    const { fake, ws } = env;
    await setMode(ws, 'p0', 'plan');
    fake.enqueue(
      { toolUses: [{ name: 'exec', input: { command: 'ls && cat a' }, id: 'toolu_p1' }] },
      { toolUses: [{ name: 'exec', input: { command: 'touch planned' }, id: 'toolu_p2' }] },
      { text: 'Planned.' },
    );
    ws.send({ type: 'message', clientId: 'p1', text: 'plan' });
    const turn = await collectTurn(ws, 'p1');
    expect(turn.frames.some((f) => f.type === 'approval_request')).toBe(false);
    expect(turn.end).toMatchObject({ type: 'final', text: 'Planned.' });
    expect(toolResultFor(fake, 'toolu_p1').content).toMatch(/^Exit code 0 · /);
    const refused = toolResultFor(fake, 'toolu_p2');
    expect(refused.is_error).toBe(true);
    expect(refused.content).toMatch(/plan mode/);
    expect(existsSync(join(workspace, 'planned'))).toBe(false);
    await setMode(ws, 'p9', 'default');
  });
});
