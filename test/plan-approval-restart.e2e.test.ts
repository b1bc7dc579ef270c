import { api, connectWs } from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { bearer, isEnd, toolResultFor, useGateway } from './helpers.js';

const env = useGateway({ config: { agents: { default: { mode: 'acceptEdits' } } } });

describe('a plan approval survives a restart', () => {
  it('after SIGKILL the plan is asked again with its choices; the chosen mode is applied and the turn goes on', async () => {
    const { fake } = env;
    const ws = await connectWs(env.gw.wsUrl, { headers: bearer(env.gw.credentials().clientToken) });
    ws.send({ type: 'mode', mode: 'plan' });
    await ws.next((f) => f.type === 'mode_ok');
    fake.enqueue({ toolUses: [{ name: 'exit_plan_mode', input: { plan: 'Survive the restart.' }, id: 'toolu_plan_restart' }] });
    ws.send({ type: 'message', clientId: 'pr1', text: 'plan it' });
    const before = await ws.next((f) => f.type === 'approval_request' && f.clientId === 'pr1');
    ws.close();
    await env.gw.kill('SIGKILL');
    env.gw = await env.gw.restart();

    const { operatorToken, clientToken } = env.gw.credentials();
    const pending = await api(env.gw, 'GET', '/api/v1/approvals?status=pending', { token: operatorToken });
    expect(pending.json.approvals).toEqual([expect.objectContaining({ id: before.approvalId, source: 'plan', choices: ['default', 'acceptEdits'] })]);
    fake.enqueue({ text: 'Carrying out the plan.' });
    const ws2 = await connectWs(env.gw.wsUrl, { headers: bearer(clientToken) });
    ws2.send({ type: 'hello', cursor: 0 });
    const again = await ws2.next((f) => f.type === 'approval_request' && f.approvalId === before.approvalId, 20_000);
    expect(again).toMatchObject({ tool: 'exit_plan_mode', source: 'plan', choices: ['default', 'acceptEdits'] });
    ws2.send({ type: 'approve', approvalId: before.approvalId, decision: 'allow', mode: 'acceptEdits' });
    const end = await ws2.next((f) => isEnd(f) && f.clientId === 'pr1', 20_000);
    expect(end).toMatchObject({ type: 'final', text: 'Carrying out the plan.' });
    expect(String(toolResultFor(fake, 'toolu_plan_restart').content)).toMatch(/now in acceptEdits mode/);
    const sessions = await api(env.gw, 'GET', '/api/v1/sessions?channel=websocket', { token: operatorToken });
    expect((sessions.json.sessions as Array<{ settings: { mode?: string } }>).map((s) => s.settings.mode)).toEqual(['acceptEdits']);
    ws2.close();
  });
});
