import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedBlock, RecordedRequest } from '@switchboard/testkit';
import { chat, collectTurn, isEnd, personWorkspace, useGateway } from './helpers.js';

// A 100-token output cap (the fake counts 4 characters a token: 400 characters of output), raised for one retry to the
// model's own maximum, 300 (`models.<name>.maxOutputTokens` of the test config's model, claude-test).
const env = useGateway({ config: { model: { maxTokens: 100 }, models: { 'claude-test': { maxOutputTokens: 300 } } }, client: true });

/** The tool_result blocks of a request's last message. */
function lastToolResults(req: RecordedRequest): RecordedBlock[] {
  const last = req.body.messages?.at(-1);
  return Array.isArray(last?.content) ? last.content.filter((b) => b.type === 'tool_result') : [];
}

describe('output-token recovery: a tool_use cut by max_tokens', () => {
  it('is retried once with the raised cap; cut again, the model is told to write in smaller parts', async () => {
    const { fake, ws } = env;
    const start = fake.requests.length;
    // 2,000 characters of file content: over both caps, so the fake cuts both attempts mid-input.
    const big = { toolUses: [{ name: 'write_file', input: { path: 'big.txt', content: 'x'.repeat(2000) }, id: 'toolu_big' }], cutAtMaxTokens: true };
    fake.enqueue(big, big, { text: 'I will write it in parts.' });
    const turn = await chat(ws, 'otr-cut-twice', 'write the big file');
    expect(turn.end).toMatchObject({ type: 'final', text: 'I will write it in parts.' });

    const requests = fake.requests.slice(start);
    // The step made two model calls (the first at the configured cap, the retry at the raised one), then the loop went on.
    expect(requests.map((r) => r.body.max_tokens)).toEqual([100, 300, 100]);
    const results = lastToolResults(requests[2]!);
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ tool_use_id: 'toolu_big', is_error: true });
    expect(String(results[0]!.content)).toMatch(/cut off/i);
    expect(String(results[0]!.content)).toMatch(/smaller parts/i);
    // The cut call sits in the history once, with an empty input (the partial JSON is never sent back).
    const assistant = requests[2]!.body.messages?.at(-2);
    expect(assistant?.content).toEqual([{ type: 'tool_use', id: 'toolu_big', name: 'write_file', input: {} }]);

    // The session's transcript kept the pair: the next turn's request carries it (the fake rejects an unpaired tool_use).
    const after = fake.requests.length;
    expect((await chat(ws, 'otr-after', 'next please')).end).toMatchObject({ type: 'final', text: 'echo: next please' });
    const history = fake.requests[after]!.body.messages ?? [];
    const blocks = history.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    expect(blocks.filter((b) => b.type === 'tool_use' && b.id === 'toolu_big')).toHaveLength(1);
    expect(blocks.filter((b) => b.type === 'tool_result' && b.tool_use_id === 'toolu_big' && b.is_error === true)).toHaveLength(1);
  });

  it('a retry that fits runs the tool with the whole input', async () => {
    const { fake, gw, ws } = env;
    const start = fake.requests.length;
    // 600 characters: over 400 (the cap), under 1,200 (the raised cap).
    const content = 'y'.repeat(600);
    const call = { toolUses: [{ name: 'write_file', input: { path: 'fits.txt', content }, id: 'toolu_fits' }], cutAtMaxTokens: true };
    fake.enqueue(call, call, { text: 'written' });
    ws.send({ type: 'message', clientId: 'otr-cut-once', text: 'write the file' });
    const approval = await ws.next((f) => f.clientId === 'otr-cut-once' && (f.type === 'approval_request' || isEnd(f)));
    expect(approval.type).toBe('approval_request');
    ws.send({ type: 'approve', approvalId: approval.approvalId, decision: 'allow' });
    const turn = await collectTurn(ws, 'otr-cut-once');
    expect(turn.end).toMatchObject({ type: 'final', text: 'written' });
    const requests = fake.requests.slice(start);
    expect(requests.map((r) => r.body.max_tokens)).toEqual([100, 300, 100]);
    expect(lastToolResults(requests[2]!)[0]).toMatchObject({ tool_use_id: 'toolu_fits' });
    expect(lastToolResults(requests[2]!)[0]!.is_error).not.toBe(true);
    expect(readFileSync(join(personWorkspace(gw), 'fits.txt'), 'utf8')).toBe(content);
  });
});
