import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, isEnd, personWorkspace, useGateway } from './helpers.js';

const env = useGateway({ client: true });

type Frame = Record<string, unknown>;

/** Sends a message whose turn writes `path`; returns the first frame that shows how it went: an approval request or the end. */
function writeTurn(id: string, path: string): Promise<Frame> {
  const { fake, ws } = env;
  fake.enqueue({ toolUses: [{ name: 'write_file', input: { path, content: id }, id: `toolu_${id}` }] }, { text: `done ${id}` });
  ws.send({ type: 'message', clientId: id, text: `write ${path}` });
  return ws.next((f) => f.clientId === id && (f.type === 'approval_request' || isEnd(f)));
}

async function storedRules(): Promise<Array<{ id: string; rule: string }>> {
  const res = await fetch(`${env.gw.url}/api/v1/rules`, { headers: bearer(env.gw.credentials().operatorToken) });
  return ((await res.json()) as { rules: Array<{ id: string; rule: string }> }).rules;
}

// Each case starts without saved rules, so one case's rule cannot answer another's.
afterEach(async () => {
  for (const r of await storedRules()) {
    const res = await fetch(`${env.gw.url}/api/v1/rules/${r.id}`, { method: 'DELETE', headers: bearer(env.gw.credentials().operatorToken) });
    expect(res.ok).toBe(true);
  }
});

describe('"always allow" saves a rule that matches exactly the approved call', () => {
  it.each([
    ['a file named **', '**', 'other.txt'],
    ['a file named *.md', '*.md', 'notes.md'],
    ['a file named {a,b}', 'dir/{a,b}', 'dir/a'],
  ])('%s: the saved rule allows that file again and asks for another', async (_name, approved, other) => {
    const ws = env.ws;
    const id = `w${approved.length}${other.length}`;
    const first = await writeTurn(`${id}a`, approved);
    expect(first.type).toBe('approval_request');
    ws.send({ type: 'approve', approvalId: first.approvalId, decision: 'allow', always: true });
    expect(await ws.next((f) => f.type === 'approval_result' && f.approvalId === first.approvalId)).toMatchObject({ outcome: 'decided', status: 'allowed' });
    expect(await ws.next((f) => f.clientId === `${id}a` && isEnd(f))).toMatchObject({ type: 'final' });
    expect(existsSync(join(personWorkspace(env.gw), approved))).toBe(true);

    // The same file again: the saved rule allows it without asking.
    expect(await writeTurn(`${id}b`, approved)).toMatchObject({ type: 'final', text: `done ${id}b` });

    // A different file: the rule must not cover it, so a person is asked.
    const second = await writeTurn(`${id}c`, other);
    expect(second.type, `the rules saved so far: ${JSON.stringify((await storedRules()).map((r) => r.rule))}`).toBe('approval_request');
    ws.send({ type: 'approve', approvalId: second.approvalId, decision: 'deny' });
    await ws.next((f) => f.clientId === `${id}c` && isEnd(f));
    expect(existsSync(join(personWorkspace(env.gw), other))).toBe(false);
  });
});
