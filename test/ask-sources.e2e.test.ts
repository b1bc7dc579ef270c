import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, collectTurn, isEnd, personWorkspace, useGateway } from './helpers.js';

// A PermissionRequest hook that approves everything it is asked about.
const dir = mkdtempSync(join(tmpdir(), 'swb-ask-src-'));
const hookScript = join(dir, 'permission-request.mjs');
writeFileSync(
  hookScript,
  `let raw = ''; process.stdin.on('data', (d) => (raw += d)); process.stdin.on('end', () => process.stdout.write(JSON.stringify({ decision: 'allow', reason: 'the hook approves everything' })));`,
);
// A PreToolUse hook that asks for a person about paths under hooked/.
const preScript = join(dir, 'pre-tool-use.mjs');
writeFileSync(
  preScript,
  `let raw = ''; process.stdin.on('data', (d) => (raw += d)); process.stdin.on('end', () => { const p = JSON.parse(raw); if (String(p.toolInput && p.toolInput.path).startsWith('hooked/')) process.stdout.write(JSON.stringify({ decision: 'ask', reason: 'a person should look at hooked/' })); });`,
);

const env = useGateway({
  config: () => ({
    permissions: { ask: ['write_file(asked/**)'] },
    hooks: {
      PermissionRequest: [{ type: 'command', command: [process.execPath, hookScript] }],
      PreToolUse: [{ type: 'command', matcher: 'write_file', command: [process.execPath, preScript] }],
    },
  }),
  client: true,
});

let workspace: string;
beforeAll(() => {
  workspace = personWorkspace(env.gw);
});

type Frame = Record<string, unknown>;

/** Starts a turn that writes `path`; returns the approval_request frame. */
async function askWrite(id: string, path: string): Promise<Frame> {
  const { fake, ws } = env;
  fake.enqueue({ toolUses: [{ name: 'write_file', input: { path, content: 'x' }, id: `toolu_${id}` }] }, { text: `done ${id}` });
  ws.send({ type: 'message', clientId: id, text: `write ${path}` });
  return ws.next((f) => f.type === 'approval_request' && f.clientId === id);
}

async function approvalRow(id: string): Promise<Frame> {
  const res = await fetch(`${env.gw.url}/api/v1/approvals?limit=50`, { headers: bearer(env.gw.credentials().operatorToken) });
  const body = (await res.json()) as { approvals: Frame[] };
  const row = body.approvals.find((a) => a.id === id);
  if (!row) throw new Error(`approval ${id} is not listed`);
  return row;
}

describe('ask sources: automatic responders answer only the mode’s default ask', () => {
  it('a PermissionRequest hook answers the mode’s ask (source "mode")', async () => {
    const req = await askWrite('m1', 'plain.txt');
    expect(req.source).toBe('mode');
    const turn = await collectTurn(env.ws, 'm1');
    expect(turn.end).toMatchObject({ type: 'final', text: 'done m1' });
    expect(existsSync(join(workspace, 'plain.txt'))).toBe(true);
    expect(await approvalRow(req.approvalId as string)).toMatchObject({ source: 'mode', status: 'allowed', decidedBy: 'hook:PermissionRequest' });
  });

  it.each([
    ['rule', 'r1', 'asked/x.txt'],
    ['safety', 's1', '.git/config'],
    ['hook', 'h1', 'hooked/x.txt'],
  ])('an ask raised by %s goes to a person; the hook cannot approve it', async (source, id, path) => {
    const req = await askWrite(id, path);
    expect(req.source).toBe(source);
    // The gateway says the ask waits for a person; had the hook answered, the turn would end first.
    const handedOver = env.gw.waitForLog((l) => l.includes('automatic responders may not answer') && l.includes(req.approvalId as string));
    const end = env.ws.next((f) => isEnd(f) && f.clientId === id, 20_000);
    expect(await Promise.race([handedOver.then(() => 'waits for a person'), end.then(() => 'the turn ended: the hook answered')])).toBe('waits for a person');
    env.ws.send({ type: 'approve', approvalId: req.approvalId, decision: 'deny' });
    const result = await env.ws.next((f) => f.type === 'approval_result' && f.approvalId === req.approvalId);
    expect(result).toMatchObject({ outcome: 'decided', status: 'denied' });
    expect(await end).toMatchObject({ type: 'final' });
    expect(existsSync(join(workspace, path))).toBe(false);
    const row = await approvalRow(req.approvalId as string);
    expect(row).toMatchObject({ source, status: 'denied' });
    expect(row.decidedBy).toMatch(/^principal:/);
  });
});
