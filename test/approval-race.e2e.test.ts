import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, connectWs, runCli } from '@switchboard/testkit';
import { bearer, collectTurn, useGateway, personWorkspace } from './helpers.js';
import { storeRows } from './store-rows.js';

// 50 messages in a row: the per-sender rate limit is raised for this test, and so are the denial
// limits (the operator may win the race several times in a row, which would end a turn with
// `denial_limit` — how often depends on the engine's timing, not on the race being atomic).
const env = useGateway({
  config: {
    channels: { websocket: { accounts: { default: { rateLimit: { burst: 1000, perMinute: 6000 } } } } },
    permissions: { denialLimits: { consecutive: 100, total: 1000 } },
  },
});

describe('approvals race', () => {
  it('the requester and an operator answering at the same moment: exactly one decision wins, 50 times', async () => {
    const { fake, gw } = env;
    const { clientToken, operatorToken } = gw.credentials();
    const ws = await connectWs(gw.wsUrl, { headers: bearer(clientToken) });
    await ws.next((f) => f.type === 'hello_ok');
    const workspace = personWorkspace(gw);
    let clientWins = 0;
    let operatorWins = 0;
    for (let i = 0; i < 50; i++) {
      const start = fake.requests.length;
      fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: `race/${i}.txt`, content: String(i) }, id: `toolu_race_${i}` }] }, { text: `done ${i}` });
      ws.send({ type: 'message', clientId: `race-${i}`, text: `race ${i}` });
      const req = await ws.next((f) => f.type === 'approval_request' && f.clientId === `race-${i}`);
      // The client allows, the operator denies: whichever lands first decides.
      ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
      const op = api(gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, { token: operatorToken, body: { decision: 'deny' } });
      const [clientResult, opResult] = await Promise.all([ws.next((f) => f.type === 'approval_result' && f.approvalId === req.approvalId), op]);
      const clientWon = clientResult.outcome === 'decided';
      const opWon = opResult.status === 200;
      expect(clientWon !== opWon).toBe(true);
      if (clientWon) {
        clientWins++;
        expect(opResult.status).toBe(409);
        expect(opResult.json.code).toBe('already_decided');
      } else {
        operatorWins++;
        expect(clientResult.outcome).toBe('already_decided');
      }
      await collectTurn(ws, `race-${i}`);
      // The tool ran at most once, and only if the allow won.
      expect(existsSync(join(workspace, `race/${i}.txt`))).toBe(clientWon);
      expect(fake.requests.length - start).toBe(2);
    }
    expect(clientWins + operatorWins).toBe(50);
    const rows = await storeRows<{ status: string; n: number }>(
      gw,
      `select status, count(*) n from approvals where tool_use_id like 'toolu_race_%' group by status`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.status, r.n]))).toEqual({
      ...(clientWins ? { allowed: clientWins } : {}),
      ...(operatorWins ? { denied: operatorWins } : {}),
    });
    ws.close();
  });

  it('a member\'s "always allow" saves a rule no wider than their own principal; a member cannot answer someone else\'s approval', async () => {
    const { fake, gw } = env;
    const member = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'mia', '--role', 'member'], { gateway: gw })).stdout) as {
      secret: string;
      principalId: string;
    };
    const other = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'otto', '--role', 'member'], { gateway: gw })).stdout) as {
      secret: string;
    };
    const ws = await connectWs(gw.wsUrl, { headers: bearer(member.secret) });
    const ows = await connectWs(gw.wsUrl, { headers: bearer(other.secret) });
    await ws.next((f) => f.type === 'hello_ok');
    await ows.next((f) => f.type === 'hello_ok');
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'notes/mia.md', content: 'm' }, id: 'toolu_always' }] }, { text: 'saved' });
    ws.send({ type: 'message', clientId: 'al1', text: 'save a note' });
    const req = await ws.next((f) => f.type === 'approval_request');
    // Another member cannot decide it.
    ows.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
    expect(await ows.next((f) => f.type === 'approval_result')).toMatchObject({ outcome: 'forbidden' });
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow', always: true });
    expect(await ws.next((f) => f.type === 'approval_result')).toMatchObject({ outcome: 'decided', status: 'allowed' });
    await collectTurn(ws, 'al1');
    const rules = await storeRows(gw, `select scope_kind, scope_id, behavior, rule from rules`);
    expect(rules).toEqual([{ scope_kind: 'principal', scope_id: member.principalId, behavior: 'allow', rule: 'write_file(notes/mia.md)' }]);
    // The saved rule applies to that member only: the same write by another member is still asked.
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'notes/mia.md', content: 'm2' }, id: 'toolu_always2' }] }, { text: 'saved again' });
    ws.send({ type: 'message', clientId: 'al2', text: 'save it again' });
    expect((await collectTurn(ws, 'al2')).frames.some((f) => f.type === 'approval_request')).toBe(false);
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'notes/mia.md', content: 'o' }, id: 'toolu_always3' }] }, { text: 'asked' });
    ows.send({ type: 'message', clientId: 'ot1', text: 'overwrite it' });
    const asked = await ows.next((f) => f.type === 'approval_request');
    ows.send({ type: 'approve', approvalId: asked.approvalId, decision: 'deny' });
    await collectTurn(ows, 'ot1');
    ws.close();
    ows.close();
  });
});
