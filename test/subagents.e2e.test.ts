import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '@switchboard/testkit';
import { bearer, chat, collectTurn, connectClient, personWorkspace, useGateway } from './helpers.js';
import { firstText, parentRequests, resultIn, scriptRoles, subagentConfig, subagentRequests } from './subagent-helpers.js';

const env = useGateway({ config: subagentConfig(), client: true });

beforeAll(async () => {
  await env.ws.next((f) => f.type === 'hello_ok');
});

async function api(path: string) {
  const res = await fetch(`${env.gw.url}/api/v1${path}`, { headers: bearer(env.gw.credentials().operatorToken) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

describe('subagents: isolated context, only the report comes back (acceptance 1)', () => {
  it("the parent's next request carries only the subagent's final text; the subagent never sees the parent's history; the sidechain is in the control API", async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    const prompt = 'List the files in the workspace and say how many there are.';
    scriptRoles(fake, [{ toolUses: [{ name: 'task', id: 'toolu_task_a1', input: { description: 'count the files', prompt } }] }, { text: 'There are none.' }], {
      [prompt]: [
        { text: 'Let me look.', toolUses: [{ name: 'list_files', id: 'toolu_sub_a1', input: { path: '.' } }] },
        { text: 'REPORT: the workspace holds no files.' },
      ],
    });
    const usage = async () => (await api(`/usage?principal=${env.gw.credentials().principalId}&agent=default`)).body.totals.calls as number;
    const callsBefore = await usage();
    const turn = await chat(ws, 's1', 'PARENT-SECRET-HISTORY: how many files do I have?');
    expect(turn.end).toMatchObject({ type: 'final', text: 'There are none.' });
    fake.setHandler(undefined);

    const subs = subagentRequests(fake, start);
    expect(subs).toHaveLength(2);
    for (const req of subs) {
      expect(req.rawBody).not.toContain('PARENT-SECRET-HISTORY');
      expect(firstText(req)).toBe(prompt);
      // The general type: the parent's tools without task; search_files is denied for everyone.
      const names = (req.body.tools ?? []).map((t) => t.name);
      expect(names).toContain('list_files');
      expect(names).not.toContain('task');
      expect(names).not.toContain('search_files');
    }
    expect(subs[0]!.body.messages).toHaveLength(1);

    const parents = parentRequests(fake, start);
    expect(parents).toHaveLength(2);
    // Every model call, the subagent's too, is recorded for the same principal and agent.
    expect((await usage()) - callsBefore).toBe(4);
    const result = resultIn(parents[1]!, 'toolu_task_a1');
    expect(result).toEqual({ content: 'REPORT: the workspace holds no files.', is_error: undefined });
    // Nothing of the subagent's own conversation reaches the parent.
    expect(parents[1]!.rawBody).not.toContain('Let me look.');
    expect(parents[1]!.rawBody).not.toContain('toolu_sub_a1');

    const turnId = turn.end.turnId as string;
    const sessions = await api('/sessions');
    const session = sessions.body.sessions.find((s: { id: string }) => s.id)!;
    const transcript = await api(`/sessions/${session.id}/transcript`);
    const linked = transcript.body.entries.find((e: { sidechains?: unknown[] }) => e.sidechains);
    expect(linked.sidechains).toEqual([
      {
        toolUseId: 'toolu_task_a1',
        turnId,
        type: 'general',
        description: 'count the files',
        state: 'completed',
        href: `/api/v1/sessions/${session.id}/sidechains/toolu_task_a1`,
      },
    ]);
    // The sidechain is never part of the parent's transcript entries.
    expect(JSON.stringify(transcript.body.entries)).not.toContain('toolu_sub_a1');
    const chain = await api(`/sessions/${session.id}/sidechains/toolu_task_a1`);
    expect(chain.status).toBe(200);
    expect(chain.body).toMatchObject({ toolUseId: 'toolu_task_a1', turnId, type: 'general', state: 'completed' });
    expect(chain.body.messages).toHaveLength(4);
    expect(JSON.stringify(chain.body.messages)).toContain('toolu_sub_a1');
    expect(chain.body.messages[3].content[0].text).toBe('REPORT: the workspace holds no files.');

    expect((await api(`/sessions/${session.id}/sidechains/toolu_nope`)).status).toBe(404);
    expect((await api('/sessions/nope/sidechains/toolu_task_a1')).status).toBe(404);
    expect((await api(`/sessions/${session.id}/sidechains/${'x'.repeat(129)}`)).status).toBe(400);
    expect((await api(`/sessions/${session.id}/sidechains/__proto__`)).status).toBe(404);
    const anonymous = await fetch(`${env.gw.url}/api/v1/sessions/${session.id}/sidechains/toolu_task_a1`);
    expect(anonymous.status).toBe(401);
  });

  it("a configured type gets its own list intersected with the parent's tools, and a long report is cut with a note", async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    const prompt = 'Research the thing.';
    const long = `LONG ${'x'.repeat(30_000)}`;
    scriptRoles(fake, [{ toolUses: [{ name: 'task', id: 'toolu_task_b1', input: { description: 'research', prompt, type: 'researcher' } }] }, { text: 'ok' }], {
      [prompt]: [{ text: long }],
    });
    const turn = await chat(ws, 's2', 'research please');
    expect(turn.end).toMatchObject({ type: 'final', text: 'ok' });
    fake.setHandler(undefined);
    const [sub] = subagentRequests(fake, start);
    expect((sub!.body.tools ?? []).map((t) => t.name).sort()).toEqual(['list_files', 'read_file']);
    const result = resultIn(parentRequests(fake, start)[1]!, 'toolu_task_b1')!;
    expect(result.content!.startsWith('LONG xxx')).toBe(true);
    expect(result.content).toMatch(/The subagent's report was cut: 30005 characters, the first 20000 shown/);
  });

  it('an unknown type is refused as an error result', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    scriptRoles(fake, [{ toolUses: [{ name: 'task', id: 'toolu_task_c1', input: { description: 'x', prompt: 'y', type: 'nobody' } }] }, { text: 'ok' }], {});
    await chat(ws, 's3', 'go');
    fake.setHandler(undefined);
    expect(subagentRequests(fake, start)).toHaveLength(0);
    expect(resultIn(parentRequests(fake, start)[1]!, 'toolu_task_c1')).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/Unknown subagent type "nobody"/),
    });
  });
});

describe('approvals bubble to the parent (acceptance 2)', () => {
  it("a subagent's write_file asks the parent's WebSocket client, naming the subagent; approving writes", async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    const prompt = 'Write the note.';
    scriptRoles(fake, [{ toolUses: [{ name: 'task', id: 'toolu_task_w1', input: { description: 'write the note', prompt } }] }, { text: 'Noted.' }], {
      [prompt]: [
        { toolUses: [{ name: 'write_file', id: 'toolu_sub_w1', input: { path: 'note.txt', content: 'from the subagent' } }] },
        { text: 'Wrote note.txt.' },
      ],
    });
    ws.send({ type: 'message', clientId: 'w1', text: 'make a note' });
    const req = await ws.next((f) => f.type === 'approval_request' && f.clientId === 'w1');
    expect(req.tool).toBe('write_file');
    expect(req.summary).toContain('🤖 general: write the note');
    expect(req.summary).toContain('note.txt');
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'allow' });
    const turn = await collectTurn(ws, 'w1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'Noted.' });
    fake.setHandler(undefined);
    expect(readFileSync(join(personWorkspace(env.gw), 'note.txt'), 'utf8')).toBe('from the subagent');
    expect(resultIn(parentRequests(fake, start)[1]!, 'toolu_task_w1')).toEqual({ content: 'Wrote note.txt.', is_error: undefined });
    // The status line of the task call.
    const progress = turn.frames.filter((f) => f.type === 'tool' && f.phase === 'progress' && f.toolUseId === 'toolu_task_w1');
    expect(progress.map((f) => f.message)).toContain('🤖 general: write the note');
  });

  it('denying gives the subagent the subagent variant of the denial text', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    const prompt = 'Write the other note.';
    scriptRoles(
      fake,
      [{ toolUses: [{ name: 'task', id: 'toolu_task_w2', input: { description: 'write another note', prompt } }] }, { text: 'It was declined.' }],
      {
        [prompt]: [
          { toolUses: [{ name: 'write_file', id: 'toolu_sub_w2', input: { path: 'denied.txt', content: 'no' } }] },
          { text: 'The write was declined.' },
        ],
      },
    );
    ws.send({ type: 'message', clientId: 'w2', text: 'another note' });
    const req = await ws.next((f) => f.type === 'approval_request' && f.clientId === 'w2');
    expect(req.summary).toContain('🤖 general: write another note');
    ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'deny' });
    const turn = await collectTurn(ws, 'w2');
    expect(turn.end).toMatchObject({ type: 'final', text: 'It was declined.' });
    fake.setHandler(undefined);
    const denied = resultIn(subagentRequests(fake, start)[1]!, 'toolu_sub_w2')!;
    expect(denied.is_error).toBe(true);
    expect(denied.content).toMatch(/person declined/);
    expect(denied.content).toMatch(/You are a subagent/);
    expect(denied.content).toMatch(/say in your final report that it was declined/);
    expect(denied.content).not.toMatch(/wait for their instructions/);
    expect(existsSync(join(personWorkspace(env.gw), 'denied.txt'))).toBe(false);
  });
});

describe('a subagent pages its own cut results', () => {
  it('read_result finds a result the budget cut inside the sidechain', async () => {
    const { fake } = env;
    const gw = await startGateway({ modelUrl: fake.url, config: { ...subagentConfig(), context: { toolResults: { maxChars: 1000 } } } });
    const ws = await connectClient(gw);
    writeFileSync(join(personWorkspace(gw), 'big.txt'), `${'a'.repeat(3000)}MIDDLE-MARK${'b'.repeat(3000)}`);
    const start = fake.requests.length;
    const prompt = 'Find the mark in big.txt.';
    scriptRoles(fake, [{ toolUses: [{ name: 'task', id: 'toolu_task_p1', input: { description: 'find the mark', prompt } }] }, { text: 'found' }], {
      [prompt]: [
        { toolUses: [{ name: 'read_file', id: 'toolu_sub_big', input: { path: 'big.txt' } }] },
        { toolUses: [{ name: 'read_result', id: 'toolu_sub_page', input: { reference: 'toolu_sub_big', offset: 2990, length: 40 } }] },
        { text: 'The mark is MIDDLE-MARK.' },
      ],
    });
    const turn = await chat(ws, 'p1', 'find it');
    expect(turn.end).toMatchObject({ type: 'final', text: 'found' });
    fake.setHandler(undefined);
    const subs = subagentRequests(fake, start);
    expect(resultIn(subs[1]!, 'toolu_sub_big')?.content).toMatch(/read_result/);
    const page = resultIn(subs[2]!, 'toolu_sub_page')!;
    expect(page.is_error).toBeFalsy();
    expect(page.content).toContain('MIDDLE-MARK');
    ws.close();
  });
});
