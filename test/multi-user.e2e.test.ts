import { describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { collectTurn, isEnd, useGateway, connectPerson } from './helpers.js';

const env = useGateway();

const person = (name: string, role: string) => connectPerson(env.gw, name, role);

type Body = { messages: Array<{ content: Array<{ text?: string }> }> };

describe('a team sharing one assistant', () => {
  it('keeps two people apart: sessions, transcripts, streams and approvals', async () => {
    const { fake, gw } = env;
    const member = await person('mem', 'member');
    const admin = await person('adm', 'admin');
    // Both chat at the same time; each model request carries only its sender's history.
    fake.setHandler((req) => {
      const text = JSON.stringify((req.body as Body).messages);
      if (text.includes('member secret')) return { text: 'noted for the member' };
      if (text.includes('admin secret')) return { text: 'noted for the admin' };
      return undefined;
    });
    member.ws.send({ type: 'message', clientId: 'm1', text: 'my member secret is 1234' });
    admin.ws.send({ type: 'message', clientId: 'a1', text: 'my admin secret is 9876' });
    const [m, a] = await Promise.all([collectTurn(member.ws, 'm1'), collectTurn(admin.ws, 'a1')]);
    fake.setHandler(undefined);
    expect(m.end.text).toBe('noted for the member');
    expect(a.end.text).toBe('noted for the admin');
    // Neither saw the other's frames.
    expect(JSON.stringify(member.ws.frames)).not.toContain('admin');
    expect(JSON.stringify(admin.ws.frames)).not.toContain('member secret');
    for (const r of fake.requests.slice(-2)) {
      const text = JSON.stringify((r.body as Body).messages);
      expect(text.includes('member secret') && text.includes('admin secret')).toBe(false);
    }

    const { operatorToken } = gw.credentials();
    const sessions = await api(gw, 'GET', '/api/v1/sessions', { token: operatorToken });
    const byPrincipal = new Map((sessions.json.sessions as Array<{ id: string; principalId: string }>).map((s) => [s.principalId, s.id]));
    expect(byPrincipal.has(member.principalId)).toBe(true);
    expect(byPrincipal.has(admin.principalId)).toBe(true);
    expect(byPrincipal.get(member.principalId)).not.toBe(byPrincipal.get(admin.principalId));
    const memberOnly = await api(gw, 'GET', `/api/v1/sessions?principalId=${member.principalId}`, { token: operatorToken });
    expect(memberOnly.json.sessions).toHaveLength(1);
    const tr = await api(gw, 'GET', `/api/v1/sessions/${byPrincipal.get(member.principalId)}/transcript`, { token: operatorToken });
    expect(JSON.stringify(tr.json.entries)).toContain('member secret');
    expect(JSON.stringify(tr.json.entries)).not.toContain('admin secret');

    // The admin's approval goes to the admin only, and the member cannot answer it.
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'adm.txt', content: 'a' }, id: 'toolu_adm' }] }, { text: 'admin file written' });
    admin.ws.send({ type: 'message', clientId: 'a2', text: 'write my file' });
    const req = await admin.ws.next((f) => f.type === 'approval_request');
    member.ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
    expect(await member.ws.next((f) => f.type === 'approval_result')).toMatchObject({ outcome: 'forbidden' });
    expect(member.ws.frames.some((f) => f.type === 'approval_request')).toBe(false);
    admin.ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
    expect(await admin.ws.next((f) => f.type === 'approval_result')).toMatchObject({ outcome: 'decided' });
    expect((await collectTurn(admin.ws, 'a2')).end.text).toBe('admin file written');
    const approvals = await api(gw, 'GET', `/api/v1/approvals?principalId=${admin.principalId}`, { token: operatorToken });
    expect(approvals.json.approvals.map((x: { id: string; decidedBy: string }) => [x.id, x.decidedBy])).toEqual([
      [req.approvalId, `principal:${admin.principalId}`],
    ]);
    const memberApprovals = await api(gw, 'GET', `/api/v1/approvals?principalId=${member.principalId}`, { token: operatorToken });
    expect(memberApprovals.json.approvals).toEqual([]);
    expect(member.ws.frames.filter((f) => isEnd(f))).toHaveLength(1);
    member.ws.close();
    admin.ws.close();
  });
});
