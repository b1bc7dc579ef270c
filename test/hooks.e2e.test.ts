import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectTurn, useGateway, personWorkspace } from './helpers.js';

let workspace: string;
let httpHook: Server;
let hookPort: number;
let hookScript: string;
const httpSeen: Array<Record<string, unknown>> = [];

/** A PreToolUse command hook: JSON on stdin, an opinion on stdout. */
const HOOK = `
let raw = '';
process.stdin.on('data', (d) => (raw += d));
process.stdin.on('end', () => {
  const p = JSON.parse(raw);
  const path = p.toolInput && p.toolInput.path;
  if (typeof path !== 'string') return;
  if (path.startsWith('private/')) return process.stdout.write(JSON.stringify({ decision: 'deny', reason: 'private/ is off limits' }));
  if (path.startsWith('draft/')) return process.stdout.write(JSON.stringify({ updatedInput: { ...p.toolInput, path: 'rewritten/' + path.slice(6) } }));
  if (path.startsWith('blocked/')) return process.stdout.write(JSON.stringify({ decision: 'allow', reason: 'the hook says yes' }));
  if (path.startsWith('slow/')) setTimeout(() => process.stdout.write('{}'), 60000);
});`;

// The hooks are up before the gateway starts (this beforeAll is registered before useGateway's).
beforeAll(async () => {
  httpHook = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      httpSeen.push(body);
      const path = (body.toolInput as { path?: string } | undefined)?.path ?? '';
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(path.startsWith('web-denied/') ? { decision: 'deny', reason: 'the http hook refuses' } : {}));
    });
  });
  await new Promise<void>((r) => httpHook.listen(0, '127.0.0.1', r));
  hookPort = (httpHook.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'swb-hooks-'));
  hookScript = join(dir, 'pre-tool-use.mjs');
  writeFileSync(hookScript, HOOK);
});
afterAll(async () => {
  await new Promise<void>((r) => httpHook.close(() => r()));
});

const env = useGateway({
  config: () => ({
    agents: { default: { mode: 'acceptEdits' } },
    permissions: { deny: ['write_file(blocked/**)'], hookTimeout: '400ms' },
    hooks: {
      PreToolUse: [
        { type: 'command', matcher: 'write_file', command: [process.execPath, hookScript] },
        { type: 'http', matcher: 'write_file|edit_file', url: `http://127.0.0.1:${hookPort}/hook` },
      ],
    },
  }),
  client: true,
});

beforeAll(() => {
  workspace = personWorkspace(env.gw);
});

type Body = { messages: Array<{ content: Array<{ content?: string; is_error?: boolean }> }> };
const lastResults = (i: number) => (env.fake.requests[i]!.body as Body).messages.at(-1)!.content;

async function writeTurn(id: string, path: string) {
  const { fake, ws } = env;
  const start = fake.requests.length;
  fake.enqueue({ toolUses: [{ name: 'write_file', input: { path, content: 'x' }, id: `toolu_${id}` }] }, { text: `ok ${id}` });
  ws.send({ type: 'message', clientId: id, text: `write ${path}` });
  const turn = await collectTurn(ws, id);
  return { turn, result: lastResults(start + 1)[0]! };
}

describe('PreToolUse hooks', () => {
  it('a command hook denies writes under a path pattern', async () => {
    const { result } = await writeTurn('h1', 'private/a.txt');
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('private/ is off limits');
    expect(existsSync(join(workspace, 'private'))).toBe(false);
  });

  it('a hook that rewrites the input: the rewritten input is validated and used', async () => {
    const { result } = await writeTurn('h2', 'draft/b.txt');
    expect(result.is_error).toBeFalsy();
    expect(readFileSync(join(workspace, 'rewritten/b.txt'), 'utf8')).toBe('x');
    expect(existsSync(join(workspace, 'draft'))).toBe(false);
  });

  it("a hook's allow never beats a deny rule", async () => {
    const { result } = await writeTurn('h3', 'blocked/c.txt');
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/Permission denied by rule/);
    expect(existsSync(join(workspace, 'blocked'))).toBe(false);
  });

  it('a hook that hangs times out, is logged, and counts as no opinion', async () => {
    const { result } = await writeTurn('h4', 'slow/d.txt');
    expect(result.is_error).toBeFalsy();
    expect(readFileSync(join(workspace, 'slow/d.txt'), 'utf8')).toBe('x');
    await env.gw.waitForLog((l) => l.includes('hook failed') && l.includes('timeout'));
  });

  it('an http hook on loopback is consulted and can deny', async () => {
    const { result } = await writeTurn('h5', 'web-denied/e.txt');
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('the http hook refuses');
    expect(httpSeen.some((b) => b.hookEvent === 'PreToolUse' && b.toolName === 'write_file')).toBe(true);
  });
});
