import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectWs, startGateway } from '@switchboard/testkit';
import { bearer, collectTurn, isEnd, useGateway, personWorkspace, findInWorkspaces } from './helpers.js';

// Agent mode `default`: anything not allowed is asked. `search_files` is denied outright,
// writes under secret/ by a content rule.
const env = useGateway({ config: { permissions: { deny: ['search_files', 'write_file(secret/**)'] } }, client: true });
let workspace: string;

type Body = {
  tools?: Array<{ name: string }>;
  messages: Array<{ role: string; content: Array<{ type: string; content?: string; is_error?: boolean; tool_use_id?: string }> }>;
};
const lastResult = (i: number) => (env.fake.requests[i]!.body as Body).messages.at(-1)!.content[0]!;

beforeAll(async () => {
  workspace = personWorkspace(env.gw);
  await env.ws.next((f) => f.type === 'hello_ok');
});

describe('the permission pipeline end to end', () => {
  it('never offers a tool that is denied outright', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    ws.send({ type: 'message', clientId: 'p0', text: 'hi' });
    await ws.next((f) => isEnd(f) && f.clientId === 'p0');
    const tools = ((fake.requests[start]!.body as Body).tools ?? []).map((t) => t.name);
    expect(tools).toContain('read_file');
    expect(tools).toContain('write_file');
    expect(tools).not.toContain('search_files');
  });

  it('asks the person before write_file; an approval writes the file', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'approved.txt', content: 'yes' }, id: 'toolu_w1' }] }, { text: 'Written.' });
    ws.send({ type: 'message', clientId: 'p1', text: 'write it' });
    const req = await ws.next((f) => f.type === 'approval_request' && f.clientId === 'p1');
    expect(req.tool).toBe('write_file');
    expect(req.summary).toContain('approved.txt');
    expect(existsSync(join(workspace, 'approved.txt'))).toBe(false);
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
    expect(await ws.next((f) => f.type === 'approval_result')).toMatchObject({ outcome: 'decided', status: 'allowed' });
    const turn = await collectTurn(ws, 'p1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'Written.' });
    expect(readFileSync(join(workspace, 'approved.txt'), 'utf8')).toBe('yes');
    expect(lastResult(start + 1).is_error).toBeFalsy();
  });

  it('a denial reaches the model as "the person said no" and nothing is written', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'denied.txt', content: 'no' }, id: 'toolu_w2' }] }, { text: 'Understood, I will wait.' });
    ws.send({ type: 'message', clientId: 'p2', text: 'write another' });
    const req = await ws.next((f) => f.type === 'approval_request' && f.clientId === 'p2');
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'deny' });
    const turn = await collectTurn(ws, 'p2');
    expect(turn.end).toMatchObject({ type: 'final', text: 'Understood, I will wait.' });
    const result = lastResult(start + 1);
    expect(result).toMatchObject({ tool_use_id: 'toolu_w2', is_error: true });
    expect(result.content).toMatch(/person declined/);
    expect(result.content).toMatch(/wait for their instructions/);
    expect(existsSync(join(workspace, 'denied.txt'))).toBe(false);
  });

  it('ends the turn after 3 denials in a row, telling the person', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    const denied = (n: number) => ({ toolUses: [{ name: 'write_file', input: { path: `secret/${n}.txt`, content: 'x' }, id: `toolu_s${n}` }] });
    fake.enqueue(denied(1), denied(2), denied(3));
    ws.send({ type: 'message', clientId: 'p3', text: 'write secrets' });
    const turn = await collectTurn(ws, 'p3');
    expect(turn.end).toMatchObject({ type: 'error', code: 'denial_limit' });
    expect(turn.end.message).toMatch(/3 tool calls in a row were denied/);
    expect(fake.requests.length - start).toBe(3);
    const rule = lastResult(start + 1);
    expect(rule.content).toMatch(/Permission denied by rule/);
    expect(rule.content).toMatch(/do not work around/);
    expect(existsSync(join(workspace, 'secret'))).toBe(false);
  });
});

describe('approval expiry', () => {
  it('turns an unanswered approval into a denial after its timeout', async () => {
    const { fake } = env;
    // Only the approval timer is shortened.
    const g2 = await startGateway({ modelUrl: fake.url, config: { permissions: { approvalTimeout: '300ms' } } });
    const c = await connectWs(g2.wsUrl, { headers: bearer(g2.credentials().clientToken) });
    const start = fake.requests.length;
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'late.txt', content: 'x' }, id: 'toolu_late' }] }, { text: 'Nobody answered.' });
    c.send({ type: 'message', clientId: 'e1', text: 'write late' });
    await c.next((f) => f.type === 'approval_request');
    const turn = await collectTurn(c, 'e1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'Nobody answered.' });
    const result = lastResult(start + 1);
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/nobody answered the approval in time/);
    expect(findInWorkspaces(g2, 'late.txt')).toBeUndefined();
    c.close();
  });
});
