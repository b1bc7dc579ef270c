import { api } from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { toolResultFor } from './helpers.js';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

const env = useWebhookGateway({ main: { dmPolicy: 'allowlist', allowFrom: ['alice'] } }, { agents: { default: { mode: 'acceptEdits' } } });

describe('webhook: plan approval', () => {
  it('the approval_request callback carries source plan and the choices; a signed decision picks the mode; always is refused', async () => {
    const { fake, gw, platform } = env;
    const hello = platform.dm('alice', 'hello');
    await platform.send(gw, hello);
    await platform.waitFor(replyTo(hello.id));
    const token = gw.credentials().operatorToken;
    const sessions = await api(gw, 'GET', '/api/v1/sessions?channel=webhook', { token });
    const sessionId = (sessions.json.sessions as Array<{ id: string }>)[0]!.id;
    expect((await api(gw, 'PUT', `/api/v1/sessions/${sessionId}/mode`, { token, body: { mode: 'plan' } })).status).toBe(200);

    fake.enqueue({ toolUses: [{ name: 'exit_plan_mode', input: { plan: 'Do the webhook thing.' }, id: 'toolu_plan_wh' }] }, { text: 'On it.' });
    const m = platform.dm('alice', 'plan it');
    await platform.send(gw, m);
    const req = await platform.waitFor((c) => c.body.type === 'approval_request' && c.body.replyTo === m.id);
    expect(req.body).toMatchObject({ tool: 'exit_plan_mode', source: 'plan', choices: ['default', 'acceptEdits'] });
    expect(req.body.summary).toContain('Do the webhook thing.');
    const approvalId = req.body.approvalId as string;

    const always = await platform.decide(gw, approvalId, { decision: 'allow', always: true, senderId: 'alice' });
    expect(always.status).toBe(400);
    expect(always.json).toMatchObject({ outcome: 'invalid' });
    const bad = await platform.decide(gw, approvalId, { decision: 'allow', mode: 'superuser', senderId: 'alice' });
    expect(bad.json).toMatchObject({ code: 'bad_request', field: 'mode' });
    const ok = await platform.decide(gw, approvalId, { decision: 'allow', mode: 'acceptEdits', senderId: 'alice' });
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ outcome: 'decided', status: 'allowed', choice: 'acceptEdits' });
    await platform.waitFor(replyTo(m.id));
    expect(String(toolResultFor(fake, 'toolu_plan_wh').content)).toMatch(/now in acceptEdits mode/);
  });
});
