import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, connectWs, runCli, type WsClient } from '@switchboard/testkit';
import { askFrame, bearer, chat, personWorkspace, toolResultFor, useGateway } from './helpers.js';

// Acceptance 3 of issue 15: memory per person, through the real gateway (two client tokens).
const env = useGateway();

async function person(name: string, role: string): Promise<{ ws: WsClient; principalId: string }> {
  const r = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', name, '--role', role], { gateway: env.gw })).stdout) as {
    secret: string;
    principalId: string;
  };
  const ws = await connectWs(env.gw.wsUrl, { headers: bearer(r.secret) });
  await ws.next((f) => f.type === 'hello_ok');
  return { ws, principalId: r.principalId };
}

async function operator(name: string, scopes: string): Promise<string> {
  const created = await runCli(['token', 'create', '--kind', 'operator', '--scopes', scopes, '--name', name], { gateway: env.gw });
  expect(created.code).toBe(0);
  return (JSON.parse(created.stdout) as { secret: string }).secret;
}

type Body = { messages: Array<{ role: string; content: Array<{ type: string; text?: string }> }> };
const userTexts = (body: unknown) =>
  (body as Body).messages.flatMap((m) => (m.role === 'user' ? m.content.flatMap((b) => (b.type === 'text' && b.text ? [b.text] : [])) : []));

describe('memory per person (issue 15, acceptance 3)', () => {
  it('alice saves a fact, finds it after /new; bob cannot; /memory forget removes it; the control API lists it only with admin', async () => {
    const { fake, gw } = env;
    const alice = await person('alice', 'member');
    const bob = await person('bob', 'member');

    // 1. alice saves a fact with a visible tool call (a private save asks nobody).
    fake.enqueue(
      { toolUses: [{ name: 'memory_save', input: { text: 'Alice’s cat is called Miso', tags: ['pets'] }, id: 'toolu_save' }] },
      { text: 'I will remember.' },
    );
    const saved = await chat(alice.ws, 'a1', 'remember that my cat is called Miso');
    expect(saved.end.text).toBe('I will remember.');
    expect(saved.frames.some((f) => f.type === 'tool' && f.name === 'memory_save')).toBe(true);
    const saveResult = toolResultFor(fake, 'toolu_save');
    expect(saveResult.is_error).toBeFalsy();
    const id = /Saved as (mem_[0-9a-f]{12}) \(private\)/.exec(saveResult.content ?? '')?.[1];
    expect(id).toBeDefined();

    // 2. /new: a fresh session, whose first request carries none of the earlier conversation.
    expect((await askFrame(alice.ws, { type: 'command', name: 'new' }, 'session_reset')).type).toBe('session_reset');
    fake.enqueue({ toolUses: [{ name: 'memory_search', input: { query: 'what is my cat called' }, id: 'toolu_find' }] }, { text: 'Your cat is Miso.' });
    const before = fake.requests.length;
    const found = await chat(alice.ws, 'a2', 'what is my cat called?');
    expect(found.end.text).toBe('Your cat is Miso.');
    expect(userTexts(fake.requests[before]!.body).join('\n')).not.toContain('remember that my cat');
    const hit = toolResultFor(fake, 'toolu_find');
    expect(hit.is_error).toBeFalsy();
    expect(hit.content).toContain(`${id} (private,`);
    expect(hit.content).toContain('Miso');

    // 3. bob finds nothing, and cannot forget alice's memory by its id.
    fake.enqueue(
      { toolUses: [{ name: 'memory_search', input: { query: 'cat Miso pets' }, id: 'toolu_bob_find' }] },
      { toolUses: [{ name: 'memory_forget', input: { id }, id: 'toolu_bob_forget' }] },
      { text: 'nothing here' },
    );
    await chat(bob.ws, 'b1', 'what is alice’s cat called?');
    expect(toolResultFor(fake, 'toolu_bob_find').content).toBe('No memories match "cat Miso pets".');
    const bobForget = toolResultFor(fake, 'toolu_bob_forget');
    expect(bobForget.is_error).toBe(true);
    expect(bobForget.content).toContain(`There is no memory ${id} you can see`);

    // Hostile FTS5 syntax never reaches the model as an error.
    fake.enqueue({ toolUses: [{ name: 'memory_search', input: { query: '"NEAR(cat* AND) OR col:^ "' }, id: 'toolu_hostile' }] }, { text: 'ok' });
    await chat(alice.ws, 'a3', 'search oddly');
    const hostile = toolResultFor(fake, 'toolu_hostile');
    expect(hostile.is_error).toBeFalsy();
    expect(hostile.content).toContain(id);

    // 4. The control API: reading alice's memories needs admin (a read token is refused), and the read is audited.
    const reader = await operator('mem-reader', 'read');
    const refused = await api(gw, 'GET', `/api/v1/principals/${alice.principalId}/memories`, { token: reader });
    expect(refused.status).toBe(403);
    const { operatorToken } = gw.credentials();
    const listed = await api(gw, 'GET', `/api/v1/principals/${alice.principalId}/memories`, { token: operatorToken });
    expect(listed.status).toBe(200);
    expect(listed.json).toMatchObject({
      total: 1,
      memories: [{ id, scope: 'private', principalId: alice.principalId, text: 'Alice’s cat is called Miso', tags: ['pets'] }],
    });
    const bobs = await api(gw, 'GET', `/api/v1/principals/${bob.principalId}/memories`, { token: operatorToken });
    expect(bobs.json.total).toBe(0);
    const audit = await api(gw, 'GET', '/api/v1/audit?action=memory.read', { token: operatorToken });
    expect(audit.json.entries.map((e: { target: string }) => e.target)).toContain(alice.principalId);

    // 5. /memory lists it; /memory forget removes it; the next search finds nothing.
    const listing = await askFrame(alice.ws, { type: 'command', name: 'memory' }, 'command_result');
    expect(listing).toMatchObject({ command: 'memory', outcome: 'memories', listing: { where: 'dm', total: 1, memories: [{ id }] } });
    expect(await askFrame(bob.ws, { type: 'command', name: 'memory', args: `forget ${id}` }, 'command_result')).toMatchObject({ outcome: 'not_forgotten' });
    const forgot = await askFrame(alice.ws, { type: 'command', name: 'memory', args: `forget ${id}` }, 'command_result');
    expect(forgot).toMatchObject({ command: 'memory', outcome: 'forgotten', id });
    fake.enqueue({ toolUses: [{ name: 'memory_search', input: { query: 'cat Miso' }, id: 'toolu_gone' }] }, { text: 'gone' });
    await chat(alice.ws, 'a4', 'what is my cat called now?');
    expect(toolResultFor(fake, 'toolu_gone').content).toBe('No memories match "cat Miso".');
    expect((await api(gw, 'GET', `/api/v1/principals/${alice.principalId}/memories`, { token: operatorToken })).json.total).toBe(0);
    alice.ws.close();
    bob.ws.close();
  });

  it('team memory: a member’s save waits for an admin’s approval (not their own), then every member finds it', async () => {
    const { fake, gw } = env;
    const carol = await person('carol', 'member');
    const dave = await person('dave', 'member');
    fake.enqueue({ toolUses: [{ name: 'memory_save', input: { text: 'The team standup is at 9:30', scope: 'team' }, id: 'toolu_team' }] }, { text: 'shared' });
    carol.ws.send({ type: 'message', clientId: 'c1', text: 'tell the team the standup time' });
    const req = await carol.ws.next((f) => f.type === 'approval_request');
    // selfApproveRoles includes member by default: a team write is still not theirs to approve.
    carol.ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
    const self = await carol.ws.next((f) => f.type === 'approval_result');
    expect(self).toMatchObject({ outcome: 'forbidden' });
    const decided = await api(gw, 'POST', `/api/v1/approvals/${req.approvalId}/decision`, {
      token: gw.credentials().operatorToken,
      body: { decision: 'allow' },
    });
    expect(decided.status).toBe(200);
    await carol.ws.next((f) => f.clientId === 'c1' && f.type === 'final');
    expect(toolResultFor(fake, 'toolu_team').content).toMatch(/^Saved as mem_[0-9a-f]{12} \(team\)\.$/);

    fake.enqueue({ toolUses: [{ name: 'memory_search', input: { query: 'standup' }, id: 'toolu_dave' }] }, { text: 'found' });
    await chat(dave.ws, 'd1', 'when is standup?');
    expect(toolResultFor(fake, 'toolu_dave').content).toContain('(team,');
    const team = await api(gw, 'GET', '/api/v1/agents/default/memories', { token: gw.credentials().operatorToken });
    expect(team.json.memories.map((m: { text: string }) => m.text)).toContain('The team standup is at 9:30');
    carol.ws.close();
    dave.ws.close();
  });

  it('deleting a principal erases their memories and workspace after an export, audited', async () => {
    const { fake, gw } = env;
    const erin = await person('erin', 'member');
    fake.enqueue({ toolUses: [{ name: 'memory_save', input: { text: 'Erin takes tea without sugar' }, id: 'toolu_erin' }] }, { text: 'ok' });
    await chat(erin.ws, 'e1', 'remember my tea');
    erin.ws.close();
    const dir = personWorkspace(gw, erin.principalId);
    mkdirSync(join(dir, 'notes'), { recursive: true });
    writeFileSync(join(dir, 'notes', 'tea.md'), 'no sugar');
    const { operatorToken } = gw.credentials();

    const exported = await api(gw, 'GET', `/api/v1/principals/${erin.principalId}/export`, { token: operatorToken });
    expect(exported.status).toBe(200);
    expect(exported.json).toMatchObject({
      principal: { id: erin.principalId, name: 'erin', role: 'member' },
      memories: [{ text: 'Erin takes tea without sugar' }],
      profile: null,
      workspace: [{ agent: 'default', files: [{ path: 'notes/tea.md', bytes: 8 }] }],
    });

    const deleted = await api(gw, 'DELETE', `/api/v1/principals/${erin.principalId}`, { token: operatorToken });
    expect(deleted.status).toBe(200);
    expect(deleted.json.erased).toEqual({ memories: { deleted: 1 }, profile: { erased: true }, workspace: { directories: 1 } });
    expect(existsSync(dir)).toBe(false);
    const audit = await api(gw, 'GET', '/api/v1/audit?action=principal.delete', { token: operatorToken });
    expect(audit.json.entries.find((e: { target: string }) => e.target === erin.principalId)?.detail).toMatchObject({
      erased: { memories: { deleted: 1 }, workspace: { directories: 1 } },
    });
    const exports = await api(gw, 'GET', '/api/v1/audit?action=principal.export', { token: operatorToken });
    expect(exports.json.entries.map((e: { target: string }) => e.target)).toContain(erin.principalId);
    expect((await api(gw, 'GET', `/api/v1/principals/${erin.principalId}/memories`, { token: operatorToken })).status).toBe(404);
  });
});
