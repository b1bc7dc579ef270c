import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, connectWs } from '@switchboard/testkit';
import { bearer, isEnd, useGateway, personWorkspace } from './helpers.js';

const env = useGateway();

describe('approvals survive a restart', () => {
  it('a pending approval is still pending after SIGKILL + restart, and approving it resumes the turn', async () => {
    const { fake } = env;
    const ws = await connectWs(env.gw.wsUrl, { headers: bearer(env.gw.credentials().clientToken) });
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'after-restart.txt', content: 'survived' }, id: 'toolu_restart' }] });
    ws.send({ type: 'message', clientId: 'ar1', text: 'write after restart' });
    const req = await ws.next((f) => f.type === 'approval_request');
    ws.close();
    await env.gw.kill('SIGKILL');
    env.gw = await env.gw.restart();
    const { operatorToken, clientToken } = env.gw.credentials();
    const pending = await api(env.gw, 'GET', '/api/v1/approvals?status=pending', { token: operatorToken });
    expect(pending.json.approvals.map((a: { id: string }) => a.id)).toEqual([req.approvalId]);
    fake.enqueue({ text: 'Written after the restart.' });
    const decided = await api(env.gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, { token: operatorToken, body: { decision: 'allow' } });
    expect(decided.status).toBe(200);
    const again = await api(env.gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, { token: operatorToken, body: { decision: 'deny' } });
    expect(again.status).toBe(409);
    const ws2 = await connectWs(env.gw.wsUrl, { headers: bearer(clientToken) });
    ws2.send({ type: 'hello', cursor: 0 });
    const end = await ws2.next((f) => isEnd(f) && f.clientId === 'ar1', 20_000);
    expect(end).toMatchObject({ type: 'final', text: 'Written after the restart.' });
    expect(readFileSync(join(personWorkspace(env.gw), 'after-restart.txt'), 'utf8')).toBe('survived');
    // The tool result reached the model once, in a valid history.
    const body = fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: Array<{ tool_use_id?: string; is_error?: boolean }> }> };
    expect(body.messages.at(-1)!.content).toEqual([expect.objectContaining({ tool_use_id: 'toolu_restart' })]);
    expect(body.messages.at(-1)!.content[0]!.is_error).toBeFalsy();
    ws2.close();
  });
});
