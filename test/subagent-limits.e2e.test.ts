import { describe, expect, it } from 'vitest';
import { connectWs, startGateway, type WsClient } from '@switchboard/testkit';
import { bearer, collectTurn, connectPerson, isEnd, useGateway } from './helpers.js';
import { firstText, parentRequests, resultIn, scriptRoles, subagentConfig, subagentRequests } from './subagent-helpers.js';

// At most two subagents of one turn at once; the default depth limit (1).
const env = useGateway({ config: subagentConfig({ perTurn: 2 }) });

async function connect(): Promise<WsClient> {
  const ws = await connectWs(env.gw.wsUrl, { headers: bearer(env.gw.credentials().clientToken) });
  await ws.next((f) => f.type === 'hello_ok');
  return ws;
}

async function api(path: string) {
  const res = await fetch(`${env.gw.url}/api/v1${path}`, { headers: bearer(env.gw.credentials().operatorToken) });
  return (await res.json()) as Record<string, any>;
}

const task = (id: string, prompt: string, type?: string) => ({ name: 'task', id, input: { description: `task ${id}`, prompt, ...(type ? { type } : {}) } });

describe('subagent limits (acceptance 3)', () => {
  it('a subagent cannot start one: task is not offered to it, even when its type lists it, and an invented call is refused', async () => {
    const { fake } = env;
    const ws = await connect();
    const start = fake.requests.length;
    scriptRoles(fake, [{ toolUses: [task('toolu_d1', 'Go deeper.', 'researcher')] }, { text: 'done' }], {
      'Go deeper.': [{ toolUses: [task('toolu_d2', 'Deeper still.')] }, { text: 'I could not delegate.' }],
      'Deeper still.': [{ text: 'must never run' }],
    });
    ws.send({ type: 'message', clientId: 'd1', text: 'delegate twice' });
    const turn = await collectTurn(ws, 'd1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'done' });
    fake.setHandler(undefined);
    const subs = subagentRequests(fake, start);
    expect(subs.map(firstText)).toEqual(['Go deeper.', 'Go deeper.']);
    expect((subs[0]!.body.tools ?? []).map((t) => t.name)).not.toContain('task');
    const refused = resultIn(subs[1]!, 'toolu_d2')!;
    expect(refused.is_error).toBe(true);
    expect(resultIn(parentRequests(fake, start)[1]!, 'toolu_d1')?.content).toBe('I could not delegate.');
    ws.close();
  });

  it('the (N+1)th concurrent subagent waits for a slot; results come back in request order', async () => {
    const { fake } = env;
    const ws = await connect();
    const start = fake.requests.length;
    scriptRoles(fake, [{ toolUses: [task('toolu_c1', 'One.'), task('toolu_c2', 'Two.'), task('toolu_c3', 'Three.')] }, { text: 'all three' }], {
      'One.': [{ text: 'report one', hold: true }],
      'Two.': [{ text: 'report two', hold: true }],
      'Three.': [{ text: 'report three' }],
    });
    ws.send({ type: 'message', clientId: 'c1', text: 'three tasks' });
    await fake.waitForHeld(2);
    // The third announces that it waits, and has not reached the model while two hold the slots.
    const waiting = await ws.next((f) => f.type === 'tool' && f.phase === 'progress' && f.toolUseId === 'toolu_c3');
    expect(waiting.message).toBe('waiting for a free subagent slot');
    expect(subagentRequests(fake, start).map(firstText).sort()).toEqual(['One.', 'Two.']);
    fake.release();
    const turn = await collectTurn(ws, 'c1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'all three' });
    fake.setHandler(undefined);
    expect(subagentRequests(fake, start)).toHaveLength(3);
    const last = parentRequests(fake, start)[1]!;
    const results = last.body.messages!.at(-1)!.content as Array<{ tool_use_id: string; content: string }>;
    expect(results.map((r) => [r.tool_use_id, r.content])).toEqual([
      ['toolu_c1', 'report one'],
      ['toolu_c2', 'report two'],
      ['toolu_c3', 'report three'],
    ]);
    ws.close();
  });

  it("aborting the parent closes both subagents' model streams", async () => {
    const { fake } = env;
    const ws = await connect();
    const closedBefore = fake.clientClosed.length;
    scriptRoles(fake, [{ toolUses: [task('toolu_a1', 'Slow one.'), task('toolu_a2', 'Slow two.')] }], {
      'Slow one.': [{ text: 'never', hold: true }],
      'Slow two.': [{ text: 'never', hold: true }],
    });
    ws.send({ type: 'message', clientId: 'a1', text: 'two slow tasks' });
    const accepted = await ws.next((f) => f.type === 'accepted' && f.clientId === 'a1');
    await fake.waitForHeld(2);
    ws.send({ type: 'abort', turnId: accepted.turnId });
    const closed = await fake.waitForClientClosed(closedBefore + 2);
    expect(closed.slice(closedBefore).map(firstText).sort()).toEqual(['Slow one.', 'Slow two.']);
    const end = await ws.next((f) => isEnd(f) && f.clientId === 'a1');
    expect(end.type).toBe('error');
    fake.setHandler(undefined);
    const session = (await api('/sessions')).sessions[0];
    for (const id of ['toolu_a1', 'toolu_a2']) expect((await api(`/sessions/${session.id}/sidechains/${id}`)).state).toBe('aborted');
    ws.close();
  });

  it('kill -9 mid-subagent: after restart the task result says interrupted and no subagent runs again', async () => {
    const { fake } = env;
    const ws = await connect();
    scriptRoles(fake, [{ toolUses: [task('toolu_k1', 'Crash here.')] }, { text: 'resumed after the crash' }], {
      'Crash here.': [{ text: 'never', hold: true }, { text: 'must never run again' }],
    });
    ws.send({ type: 'message', clientId: 'k1', text: 'start a task' });
    const accepted = await ws.next((f) => f.type === 'accepted' && f.clientId === 'k1');
    await fake.waitForHeld(1);
    ws.close();
    await env.gw.kill('SIGKILL');
    const before = fake.requests.length;
    env.gw = await env.gw.restart();
    // The resumed turn's final, replayed from the start of the log.
    const again = await connectWs(env.gw.wsUrl, { headers: bearer(env.gw.credentials().clientToken) });
    await again.next((f) => f.type === 'hello_ok');
    again.send({ type: 'hello', cursor: 0 });
    const end = await again.next((f) => isEnd(f) && f.turnId === accepted.turnId);
    expect(end).toMatchObject({ type: 'final', text: 'resumed after the crash' });
    fake.setHandler(undefined);
    const after = fake.requests.slice(before);
    expect(subagentRequests(fake, before)).toHaveLength(0);
    expect(after).toHaveLength(1);
    const result = resultIn(after[0]!, 'toolu_k1')!;
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/the subagent was interrupted and will not run again/);
    const session = (await api('/sessions')).sessions[0];
    expect((await api(`/sessions/${session.id}/sidechains/toolu_k1`)).state).toBe('interrupted');
    again.close();
  });
});

describe('the per-gateway subagent limit', () => {
  it("one person's subagent waits while another person's holds the gateway's only slot", async () => {
    const { fake } = env;
    const gw = await startGateway({ modelUrl: fake.url, config: subagentConfig({ perGateway: 1 }) });
    const alice = await connectPerson(gw, 'alice', 'member');
    const bob = await connectPerson(gw, 'bob', 'member');
    const start = fake.requests.length;
    scriptRoles(
      fake,
      [{ toolUses: [task('toolu_g1', 'Alice task.')] }, { toolUses: [task('toolu_g2', 'Bob task.')] }, { text: 'a done' }, { text: 'b done' }],
      {
        'Alice task.': [{ text: 'alice report', hold: true }],
        'Bob task.': [{ text: 'bob report' }],
      },
    );
    alice.ws.send({ type: 'message', clientId: 'g1', text: 'alice asks' });
    await fake.waitForHeld(1);
    bob.ws.send({ type: 'message', clientId: 'g2', text: 'bob asks' });
    const waiting = await bob.ws.next((f) => f.type === 'tool' && f.phase === 'progress' && f.toolUseId === 'toolu_g2');
    expect(waiting.message).toBe('waiting for a free subagent slot');
    expect(subagentRequests(fake, start).map(firstText)).toEqual(['Alice task.']);
    fake.release();
    expect((await collectTurn(alice.ws, 'g1')).end.type).toBe('final');
    expect((await collectTurn(bob.ws, 'g2')).end.type).toBe('final');
    fake.setHandler(undefined);
    expect(subagentRequests(fake, start).map(firstText)).toEqual(['Alice task.', 'Bob task.']);
    alice.ws.close();
    bob.ws.close();
  });
});
