import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, connectWs, startFakeAnthropic, startGateway, stopAllGateways, type FakeAnthropic, type GatewayProcess } from '@switchboard/testkit';
import { bearer, isEnd } from './helpers.js';

let fake: FakeAnthropic;
let gw: GatewayProcess;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  gw = await startGateway({ modelUrl: fake.url });
});
afterAll(async () => {
  await stopAllGateways();
  await fake.close();
});

describe('approvals survive a restart', () => {
  it('a pending approval is still pending after SIGKILL + restart, and approving it resumes the turn', async () => {
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'after-restart.txt', content: 'survived' }, id: 'toolu_restart' }] });
    ws.send({ type: 'message', clientId: 'ar1', text: 'write after restart' });
    const req = await ws.next((f) => f.type === 'approval_request');
    ws.close();
    await gw.kill('SIGKILL');
    gw = await gw.restart();
    const { operatorToken, clientToken } = gw.credentials();
    const pending = await api(gw, 'GET', '/api/v1/approvals?status=pending', { token: operatorToken });
    expect(pending.json.approvals.map((a: { id: string }) => a.id)).toEqual([req.approvalId]);
    fake.enqueue({ text: 'Written after the restart.' });
    const decided = await api(gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, { token: operatorToken, body: { decision: 'allow' } });
    expect(decided.status).toBe(200);
    const again = await api(gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, { token: operatorToken, body: { decision: 'deny' } });
    expect(again.status).toBe(409);
    const ws2 = await connectWs(gw.wsUrl, { headers: bearer(clientToken) });
    ws2.send({ type: 'hello', cursor: 0 });
    const end = await ws2.next((f) => isEnd(f) && f.clientId === 'ar1', 20_000);
    expect(end).toMatchObject({ type: 'final', text: 'Written after the restart.' });
    expect(readFileSync(join(gw.dataDir, 'workspaces', 'default', 'after-restart.txt'), 'utf8')).toBe('survived');
    // The tool result reached the model once, in a valid history.
    const body = fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: Array<{ tool_use_id?: string; is_error?: boolean }> }> };
    expect(body.messages.at(-1)!.content).toEqual([expect.objectContaining({ tool_use_id: 'toolu_restart' })]);
    expect(body.messages.at(-1)!.content[0]!.is_error).toBeFalsy();
    ws2.close();
  });
});
