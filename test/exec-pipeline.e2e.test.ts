import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, isEnd, personWorkspace, toolResultFor, useGateway } from './helpers.js';

// The permission pipeline for `exec` through the real gateway, real bubblewrap and the real
// command checks (issue 14, acceptance 1 and 4): per-call classification, per-part rules, the
// tool's own safety asks under bypassPermissions, and "always allow" per part.
// The gateway's and the agent's modes allow up to bypassPermissions, so the owner's session may
// choose any mode; the rate limit leaves room for every turn of the file.
const env = useGateway({
  client: true,
  config: {
    permissions: { mode: 'bypassPermissions' },
    agents: { default: { mode: 'bypassPermissions' } },
    channels: { websocket: { accounts: { default: { rateLimit: { burst: 1000, perMinute: 6000 } } } } },
    tools: { exec: { timeout: '20s', maxTimeout: '30s' } },
  },
});

type Frame = Record<string, unknown>;
let turns = 0;

/** Sends a message whose turn runs `command`; returns the first frame that shows how it went (an approval request or the end) and the tool_use id. */
async function execTurn(command: string): Promise<{ first: Frame; id: string; clientId: string }> {
  const n = ++turns;
  const id = `toolu_exec_${n}`;
  const clientId = `exec-${n}`;
  env.fake.enqueue({ toolUses: [{ name: 'exec', input: { command }, id }] }, { text: `done ${n}` });
  env.ws.send({ type: 'message', clientId, text: `run ${command}` });
  const first = await env.ws.next((f) => f.clientId === clientId && (f.type === 'approval_request' || isEnd(f)), 30_000);
  return { first, id, clientId };
}

async function setMode(mode: string): Promise<void> {
  env.ws.send({ type: 'mode', mode });
  const got = await env.ws.next((f) => f.type === 'mode_ok' || f.type === 'error');
  expect(got, JSON.stringify(got)).toMatchObject({ type: 'mode_ok', mode });
}

async function operator(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${env.gw.url}/api/v1${path}`, {
    method,
    headers: { ...bearer(env.gw.credentials().operatorToken), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function storedRules(): Promise<Array<{ id: string; rule: string; behavior: string }>> {
  return ((await (await operator('GET', '/rules')).json()) as { rules: Array<{ id: string; rule: string; behavior: string }> }).rules;
}

afterEach(async () => {
  for (const r of await storedRules()) expect((await operator('DELETE', `/rules/${r.id}`)).ok).toBe(true);
});

describe('exec through the permission pipeline', () => {
  it('default mode: echo hi && ls (every part read-only) runs without asking; touch a asks', async () => {
    await setMode('default');
    const ws = personWorkspace(env.gw);
    writeFileSync(join(ws, 'listed.txt'), 'x');
    const read = await execTurn('echo hi && ls');
    expect(read.first).toMatchObject({ type: 'final' });
    const result = toolResultFor(env.fake, read.id);
    expect(result.is_error ?? false).toBe(false);
    expect(result.content).toContain('hi');
    expect(result.content).toContain('listed.txt');

    const edit = await execTurn('touch a');
    expect(edit.first).toMatchObject({ type: 'approval_request', tool: 'exec', source: 'mode' });
    env.ws.send({ type: 'approve', approvalId: edit.first.approvalId, decision: 'deny' });
    await env.ws.next((f) => f.clientId === edit.clientId && isEnd(f), 30_000);
    expect(existsSync(join(ws, 'a'))).toBe(false);
  });

  it('bypassPermissions: rm -rf . asks with source safety, even under an allow rule', async () => {
    const ws = personWorkspace(env.gw);
    writeFileSync(join(ws, 'keep.txt'), 'x');
    expect((await operator('POST', '/rules', { scope: { kind: 'gateway' }, behavior: 'allow', rule: 'exec' })).ok).toBe(true);
    await setMode('bypassPermissions');
    const removal = await execTurn('rm -rf .');
    expect(removal.first).toMatchObject({ type: 'approval_request', tool: 'exec', source: 'safety' });
    env.ws.send({ type: 'approve', approvalId: removal.first.approvalId, decision: 'deny' });
    await env.ws.next((f) => f.clientId === removal.clientId && isEnd(f), 30_000);
    expect(existsSync(join(ws, 'keep.txt'))).toBe(true);
    // Without a safety concern, bypassPermissions runs it.
    expect((await execTurn('touch bypassed')).first).toMatchObject({ type: 'final' });
    expect(existsSync(join(ws, 'bypassed'))).toBe(true);
  });

  it('plan: only read-only commands run', async () => {
    const ws = personWorkspace(env.gw);
    writeFileSync(join(ws, 'f'), 'plan-content');
    await setMode('plan');
    const read = await execTurn('ls && cat f');
    expect(read.first).toMatchObject({ type: 'final' });
    expect(toolResultFor(env.fake, read.id).content).toContain('plan-content');
    const write = await execTurn('touch planned');
    expect(write.first).toMatchObject({ type: 'final' });
    expect(toolResultFor(env.fake, write.id)).toMatchObject({ is_error: true });
    expect(toolResultFor(env.fake, write.id).content).toMatch(/plan mode/);
    expect(existsSync(join(ws, 'planned'))).toBe(false);
  });

  it('rules match per part: an allow must cover every part, a deny on one part denies', async () => {
    const ws = personWorkspace(env.gw);
    await setMode('default');
    expect((await operator('POST', '/rules', { scope: { kind: 'gateway' }, behavior: 'allow', rule: 'exec(touch:*)' })).ok).toBe(true);
    expect((await operator('POST', '/rules', { scope: { kind: 'gateway' }, behavior: 'deny', rule: 'Bash(rm:*)' })).ok).toBe(true);
    expect((await execTurn('touch r1 && touch r2')).first).toMatchObject({ type: 'final' });
    expect(existsSync(join(ws, 'r1')) && existsSync(join(ws, 'r2'))).toBe(true);

    const denied = await execTurn('touch r3 && rm -f r1');
    expect(denied.first).toMatchObject({ type: 'final' });
    expect(toolResultFor(env.fake, denied.id)).toMatchObject({ is_error: true });
    expect(toolResultFor(env.fake, denied.id).content).toContain('rm -f r1');
    expect(existsSync(join(ws, 'r3'))).toBe(false);

    // touch is allowed, mkdir is not: the call asks.
    const partly = await execTurn('touch r4 && mkdir d');
    expect(partly.first).toMatchObject({ type: 'approval_request', source: 'mode' });
    env.ws.send({ type: 'approve', approvalId: partly.first.approvalId, decision: 'deny' });
    await env.ws.next((f) => f.clientId === partly.clientId && isEnd(f), 30_000);
  });

  it('"always allow" saves one exact rule per part: the same parts run again, another part asks', async () => {
    const ws = personWorkspace(env.gw);
    await setMode('default');
    const first = await execTurn('touch c && touch d');
    expect(first.first).toMatchObject({ type: 'approval_request' });
    env.ws.send({ type: 'approve', approvalId: first.first.approvalId, decision: 'allow', always: true });
    await env.ws.next((f) => f.clientId === first.clientId && isEnd(f), 30_000);
    expect((await storedRules()).map((r) => r.rule).sort()).toEqual(['exec(touch c)', 'exec(touch d)']);

    rmSync(join(ws, 'c'), { force: true });
    expect((await execTurn('touch d && touch c')).first).toMatchObject({ type: 'final' });
    expect(existsSync(join(ws, 'c'))).toBe(true);
    const other = await execTurn('touch c && touch e');
    expect(other.first).toMatchObject({ type: 'approval_request' });
    env.ws.send({ type: 'approve', approvalId: other.first.approvalId, decision: 'deny' });
    await env.ws.next((f) => f.clientId === other.clientId && isEnd(f), 30_000);
    expect(existsSync(join(ws, 'e'))).toBe(false);
  });
});
