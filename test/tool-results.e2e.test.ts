import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectWs, mcpFixturePath, startGateway } from '@switchboard/testkit';
import { bearer, chat, isEnd, useFakeModel } from './helpers.js';

const env = useFakeModel();
const dir = mkdtempSync(join(tmpdir(), 'swb-tool-results-'));

type Block = { type: string; tool_use_id?: string; content?: string; is_error?: boolean; name?: string };
type Body = { tools?: Array<{ name: string }>; messages: Array<{ role: string; content: Block[] | string }> };

const BIG = 200_000;
/** What the fixture's `big` tool returns for `chars` characters. */
const pattern = (chars: number) => '0123456789'.repeat(Math.ceil(chars / 10)).slice(0, chars);

/** Every tool_result block of a request, by tool_use id. */
function resultsOf(body: Body): Map<string, Block> {
  const out = new Map<string, Block>();
  for (const m of body.messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_result' && b.tool_use_id) out.set(b.tool_use_id, b);
  }
  return out;
}

const config = {
  mcpServers: { fx: { command: process.execPath, args: [mcpFixturePath()], env: { MCP_FIXTURE_LOG: join(dir, 'fx.log') } } },
  permissions: { allow: ['mcp__fx'] },
  // The MCP tools and the read-only file tools (read_result comes with them): the schemas of every
  // built-in tool would fill most of this small window on their own.
  agents: { default: { tools: { profile: ['minimal', 'group:mcp'] } } },
  // A small window: W = 4,000 tokens, microcompact past 0.25·W, the last turn kept whole.
  models: { 'claude-test': { contextWindow: 5000, outputReserve: 1000 } },
  context: { toolResults: { maxChars: 8000 }, microcompact: { threshold: 0.25, keepTurns: 1 } },
};

describe('acceptance 3: a 200 KB MCP tool result', () => {
  it('the model sees head, tail and a reference; read_result pages it; later requests carry the placeholder; a kill -9 resumes with the same view', async () => {
    const { fake } = env;
    let gw = await startGateway({ modelUrl: fake.url, config });
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });

    // Turn 1: the big result, then one page of it through read_result.
    const start = fake.requests.length;
    fake.enqueue(
      { toolUses: [{ name: 'mcp__fx__big', input: { chars: BIG }, id: 'toolu_big' }] },
      { toolUses: [{ name: 'read_result', input: { reference: 'toolu_big', offset: 100_003, length: 5000 }, id: 'toolu_page' }] },
      { text: 'read it' },
    );
    const first = await chat(ws, 't1', 'fetch the big thing');
    expect(first.end).toMatchObject({ type: 'final', text: 'read it' });
    const offered = ((fake.requests[start]!.body as Body).tools ?? []).map((t) => t.name);
    expect(offered).toContain('read_result');

    const seen = resultsOf(fake.requests[start + 1]!.body as Body).get('toolu_big')!;
    expect(seen.is_error).toBeUndefined();
    const whole = pattern(BIG);
    expect(seen.content!.length).toBeLessThan(9000);
    expect(whole.startsWith(seen.content!.slice(0, 4000))).toBe(true);
    expect(seen.content).toContain(`\n\n${whole.slice(-2000)}\n\n[output cut: showing 8000 of 200000 characters`);
    expect(seen.content).toContain('toolu_big');
    expect(seen.content).toContain('read_result');

    const page = resultsOf(fake.requests[start + 2]!.body as Body).get('toolu_page')!;
    expect(page.is_error).toBeUndefined();
    expect(page.content).toContain(whole.slice(100_003, 105_003));
    expect(page.content).toMatch(/105003/); // where the next page starts

    // Turn 2: past the threshold, turn 1's results are older than the kept turn: placeholders.
    // The turn runs a tool and is killed while its second call streams.
    const before = fake.requests.length;
    fake.enqueue({ toolUses: [{ name: 'mcp__fx__echo', input: { text: 'ping' }, id: 'toolu_echo' }] }, { holdAfterEvents: 2, text: 'after the crash' });
    ws.send({ type: 'message', clientId: 't2', text: 'and now something small' });
    await fake.waitForRequests(before + 2);
    const held = fake.requests[before + 1]!.body as Body;
    const cleared = resultsOf(held);
    for (const id of ['toolu_big', 'toolu_page']) {
      expect(cleared.get(id)!.content).toMatch(/^\[tool result cleared/);
      expect(cleared.get(id)!.content).toContain(id);
    }
    expect(cleared.get('toolu_echo')!.content).toBe('ping');
    expect(JSON.stringify(fake.requests[before]!.body)).not.toContain(whole.slice(0, 4000));
    expect(JSON.stringify(held)).not.toContain(whole.slice(0, 4000));
    const lastCursor = (ws.frames.filter(isEnd).at(-1)?.cursor as number | undefined) ?? 0;
    await gw.kill('SIGKILL');
    fake.release();
    ws.close();

    // Restarted with a window so large that no threshold is crossed: the view comes from the stored markers alone.
    gw = await gw.restart({ config: { models: { 'claude-test': { contextWindow: 10_000_000 } } } });
    const resumedAt = fake.requests.length;
    const ws2 = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    await ws2.next((f) => f.type === 'hello_ok');
    ws2.send({ type: 'hello', cursor: lastCursor });
    const end = await ws2.next((f) => isEnd(f) && f.clientId === 't2', 20_000);
    expect(end).toMatchObject({ type: 'final' });
    const resumed = fake.requests[resumedAt]!.body as Body;
    expect(resumed.messages).toEqual(held.messages);

    // The transcript keeps the whole result and records the cut as a marker entry.
    const op = { headers: bearer(gw.credentials().operatorToken) };
    const sessions = (await (await fetch(`${gw.url}/api/v1/sessions`, op)).json()) as { sessions: Array<{ id: string }> };
    const transcript = (await (await fetch(`${gw.url}/api/v1/sessions/${sessions.sessions[0]!.id}/transcript`, op)).json()) as {
      entries: Array<{ kind: string; payload: { fullContent?: string; result?: { tool_use_id: string }; cleared?: string[] } }>;
    };
    const stored = transcript.entries.find((e) => e.kind === 'tool_result' && e.payload.result?.tool_use_id === 'toolu_big');
    expect(stored?.payload.fullContent).toBe(whole);
    const markers = transcript.entries.filter((e) => e.kind === 'microcompact');
    expect(markers).toHaveLength(1);
    expect(markers[0]!.payload.cleared).toEqual(['toolu_big', 'toolu_page']);

    // read_result still pages the whole after the restart.
    fake.enqueue({ toolUses: [{ name: 'read_result', input: { reference: 'toolu_big', offset: BIG - 10 }, id: 'toolu_tail' }] }, { text: 'tail read' });
    const third = await chat(ws2, 't3', 'read the very end');
    expect(third.end).toMatchObject({ type: 'final', text: 'tail read' });
    const tail = resultsOf(fake.requests.at(-1)!.body as Body).get('toolu_tail')!;
    expect(tail.content).toContain(whole.slice(-10));
    expect(tail.content).toMatch(/end of the result/);
    ws2.close();
    await gw.stop();
  });

  it('read_result never reads another session’s result', async () => {
    const { fake } = env;
    const gw = await startGateway({ modelUrl: fake.url, config });
    const alice = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    fake.enqueue(
      { toolUses: [{ name: 'mcp__fx__big', input: { chars: 20_000 }, id: 'toolu_secret' }] },
      { toolUses: [{ name: 'read_result', input: { reference: 'toolu_secret', offset: 15_000 }, id: 'toolu_own' }] },
      { text: 'stored' },
    );
    expect((await chat(alice, 's1', 'store a big one')).end).toMatchObject({ type: 'final', text: 'stored' });
    // Its own session reads it.
    expect(resultsOf(fake.requests.at(-1)!.body as Body).get('toolu_own')!.content).toContain(pattern(20_000).slice(15_000));
    // A fresh session (the old transcript is kept): the reference is not its own.
    alice.send({ type: 'new_session' });
    await alice.next((f) => f.type === 'session_reset');
    const bob = alice;
    fake.enqueue({ toolUses: [{ name: 'read_result', input: { reference: 'toolu_secret' }, id: 'toolu_steal' }] }, { text: 'nothing' });
    const turn = await chat(bob, 's2', 'read toolu_secret');
    expect(turn.end).toMatchObject({ type: 'final', text: 'nothing' });
    const stolen = resultsOf(fake.requests.at(-1)!.body as Body).get('toolu_steal')!;
    expect(stolen.is_error).toBe(true);
    expect(stolen.content).toBe('There is no stored result with reference "toolu_secret" in this session.');
    expect(stolen.content).not.toContain('0123456789');
    bob.close();
    await gw.stop();
  });
});
