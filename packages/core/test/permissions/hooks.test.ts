import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctx, env, writeFile } from './fixtures.js';
import {
  HOOK_EVENTS,
  decidePermission,
  preToolUseFromHooks,
  hookLabel,
  hookMatches,
  hooksConfigSchema,
  parseOpinion,
  runHooks,
  type HookDefinition,
  type HookLog,
  type HooksConfig,
} from '../../src/index.js';

const dir = mkdtempSync(path.join(tmpdir(), 'swb-hooks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type CommandDef = Extract<HookDefinition, { type: 'command' }>;

function script(name: string, body: string): CommandDef {
  const file = path.join(dir, `${name}.mjs`);
  writeFileSync(file, body);
  return { type: 'command', command: [process.execPath, file] };
}
const READ_STDIN = `let s = ''; for await (const c of process.stdin) s += c; const p = JSON.parse(s);`;

function recorder(): HookLog & { entries: Array<Record<string, unknown>> } {
  const entries: Array<Record<string, unknown>> = [];
  return { entries, warn: (obj, msg) => entries.push({ ...obj, msg }) };
}

describe('hook matchers', () => {
  it('matches names, | alternatives, * globs, MCP prefixes and aliases', () => {
    expect(hookMatches(undefined, 'x')).toBe(true);
    expect(hookMatches('', 'x')).toBe(true);
    expect(hookMatches('*', undefined)).toBe(true);
    expect(hookMatches('write_file|edit_file', 'edit_file')).toBe(true);
    expect(hookMatches('write_file | edit_file', 'read_file')).toBe(false);
    expect(hookMatches('mcp__github__*', 'mcp__github__x')).toBe(true);
    expect(hookMatches('mcp__github', 'mcp__github__x')).toBe(true);
    expect(hookMatches('Write', 'write_file')).toBe(true);
    expect(hookMatches('write_file', undefined)).toBe(false);
  });

  it('labels hooks without secrets', () => {
    expect(hookLabel({ type: 'http', url: 'https://u:pw@h.example/p?token=x', headers: { authorization: 'secret' } })).toBe('http:https://h.example/p');
    expect(hookLabel({ type: 'command', command: ['/usr/bin/guard', '--key=secret'] })).toBe('command:/usr/bin/guard');
  });

  it('parses opinions strictly', () => {
    expect(parseOpinion('')).toBeUndefined();
    expect(parseOpinion('{}')).toBeUndefined();
    expect(parseOpinion('{"decision":"deny","reason":"r","extra":1}')).toEqual({ decision: 'deny', reason: 'r' });
    expect(() => parseOpinion('nope')).toThrow(/not JSON/);
    expect(() => parseOpinion('{"decision":"maybe"}')).toThrow(/not an opinion/);
    expect(() => parseOpinion('[1]')).toThrow(/not an opinion/);
  });

  it('validates hook config with zod', () => {
    expect(HOOK_EVENTS).toHaveLength(11);
    expect(hooksConfigSchema.safeParse({ PreToolUse: [{ type: 'command', command: ['node', 'x.mjs'], matcher: 'write_file' }] }).success).toBe(true);
    expect(hooksConfigSchema.safeParse({ PreToolUse: [{ type: 'command', command: [] }] }).success).toBe(false);
    expect(hooksConfigSchema.safeParse({ PreToolUse: [{ type: 'command', command: 'rm -rf /' }] }).success).toBe(false);
    expect(hooksConfigSchema.safeParse({ Stop: [{ type: 'http', url: 'file:///etc/passwd' }] }).success).toBe(false);
    expect(hooksConfigSchema.safeParse({ Nope: [] }).success).toBe(false);
    const parsed: HooksConfig = hooksConfigSchema.parse({ Stop: [{ type: 'http', url: 'https://h.example/stop', headers: { a: 'b' } }] });
    expect(parsed.Stop?.[0]?.type).toBe('http');
  });

  it('accepts a pino logger', () => {
    const log: HookLog = pino({ level: 'silent' });
    expect(typeof log.warn).toBe('function');
  });
});

describe('command hooks', () => {
  it('sends the payload as JSON on stdin and reads the opinion from stdout', async () => {
    const hook = script(
      'echo',
      `${READ_STDIN} process.stdout.write(JSON.stringify({ decision: 'allow', reason: p.hookEvent + ':' + p.toolName + ':' + p.toolInput.path }));`,
    );
    const r = await runHooks('PreToolUse', { toolName: 'write_file', toolInput: { path: 'a.md' } }, { PreToolUse: [hook] }, recorder());
    expect(r).toEqual({ status: 'ok', opinions: [{ decision: 'allow', reason: 'PreToolUse:write_file:a.md' }], failures: [] });
  });

  it('runs with shell:false, so shell syntax in arguments stays literal', async () => {
    const hook = script('argv', `process.stdout.write(JSON.stringify({ reason: process.argv[2] }));`);
    const withArg: HookDefinition = { ...hook, command: [...hook.command, '$(echo hacked); `id`'] };
    const r = await runHooks('Stop', {}, { Stop: [withArg] }, recorder());
    expect(r.opinions).toEqual([{ reason: '$(echo hacked); `id`' }]);
  });

  it('gives the hook only the environment it is configured with', async () => {
    process.env.SWB_TEST_GATEWAY_SECRET = 'leak';
    const base = script(
      'env',
      `process.stdout.write(JSON.stringify({ reason: [process.env.SWB_TEST_GATEWAY_SECRET ?? 'none', process.env.HOOK_VAR, process.env.BASE_VAR].join(',') }));`,
    );
    const hook: HookDefinition = { ...base, env: { HOOK_VAR: 'h' } };
    const r = await runHooks('SessionStart', {}, { SessionStart: [hook] }, recorder(), { env: { BASE_VAR: 'b' } });
    delete process.env.SWB_TEST_GATEWAY_SECRET;
    expect(r.opinions).toEqual([{ reason: 'none,h,b' }]);
  });

  it('treats empty output as no opinion', async () => {
    const r = await runHooks('PostToolUse', { toolName: 'x' }, { PostToolUse: [script('quiet', `${READ_STDIN}`)] }, recorder());
    expect(r).toEqual({ status: 'ok', opinions: [], failures: [] });
  });

  it('counts a non-zero exit, bad JSON or a missing program as no opinion, and logs it', async () => {
    const log = recorder();
    const hooks: HooksConfig = {
      PreToolUse: [
        script('exit', `process.stderr.write('went wrong'); process.exit(3);`),
        script('junk', `process.stdout.write('not json');`),
        { type: 'command', command: [path.join(dir, 'missing-program')] },
        script('ok', `process.stdout.write('{"decision":"ask"}');`),
      ],
    };
    const r = await runHooks('PreToolUse', { toolName: 't' }, hooks, log);
    expect(r.status).toBe('ok');
    expect(r.opinions).toEqual([{ decision: 'ask' }]);
    expect(r.failures.map((f) => f.kind)).toEqual(['exit', 'bad_output', 'spawn']);
    expect(r.failures[0]?.error).toMatch(/exited with 3: went wrong/);
    expect(log.entries).toHaveLength(3);
    expect(log.entries[0]).toMatchObject({ event: 'PreToolUse', kind: 'exit', msg: 'hook failed; counted as no opinion' });
  });

  it('kills a hook that outlives its timeout', async () => {
    const pidFile = path.join(dir, 'slow.pid');
    const hook = {
      ...script(
        'slow',
        `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setTimeout(() => process.stdout.write('{"decision":"allow"}'), 10000);`,
      ),
      timeoutMs: 1500,
    };
    const started = Date.now();
    const r = await runHooks('PreToolUse', { toolName: 't' }, { PreToolUse: [hook] }, recorder());
    expect(Date.now() - started).toBeLessThan(8000);
    expect(r.opinions).toEqual([]);
    expect(r.failures[0]).toMatchObject({ kind: 'timeout', error: 'timed out after 1500 ms' });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 40 && alive(); i++) await new Promise((res) => setTimeout(res, 50));
    expect(alive()).toBe(false);
  });

  it('runs only hooks whose matcher covers the tool; the matcher is ignored for other events', async () => {
    const yes: HookDefinition = { ...script('yes', `process.stdout.write('{"reason":"ran"}');`), matcher: 'write_file|edit_file' };
    expect((await runHooks('PreToolUse', { toolName: 'read_file' }, { PreToolUse: [yes] }, recorder())).opinions).toEqual([]);
    expect((await runHooks('PreToolUse', { toolName: 'edit_file' }, { PreToolUse: [yes] }, recorder())).opinions).toEqual([{ reason: 'ran' }]);
    expect((await runHooks('UserPromptSubmit', { prompt: 'hi' }, { UserPromptSubmit: [yes] }, recorder())).opinions).toEqual([{ reason: 'ran' }]);
    expect(await runHooks('Stop', {}, {}, recorder())).toEqual({ status: 'ok', opinions: [], failures: [] });
  });

  it('reports PermissionRequest as failed when a hook fails, so people decide', async () => {
    const r = await runHooks(
      'PermissionRequest',
      { toolName: 't' },
      { PermissionRequest: [script('fail', 'process.exit(1)'), script('allow', `process.stdout.write('{"decision":"allow"}')`)] },
      recorder(),
    );
    expect(r.status).toBe('failed');
    expect(r.opinions).toEqual([{ decision: 'allow' }]);
  });
});

describe('http hooks', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ url: string; headers: IncomingMessage['headers']; body: unknown }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', headers: req.headers, body: JSON.parse(body) as unknown });
        if (req.url === '/deny') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"decision":"deny","reason":"policy"}');
        if (req.url === '/500') return res.writeHead(500).end('{"decision":"allow"}');
        if (req.url === '/junk') return res.writeHead(200).end('<html>');
        if (req.url === '/empty') return res.writeHead(204).end();
        if (req.url === '/redirect') return res.writeHead(302, { location: '/deny' }).end();
        if (req.url === '/slow') return setTimeout(() => res.writeHead(200).end('{"decision":"allow"}'), 3000);
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('POSTs the payload as JSON with the configured headers and reads the opinion', async () => {
    const r = await runHooks(
      'PreToolUse',
      { toolName: 'exec', toolInput: { command: 'ls' } },
      { PreToolUse: [{ type: 'http', url: `${base}/deny`, headers: { authorization: 'Bearer t' } }] },
      recorder(),
    );
    expect(r.opinions).toEqual([{ decision: 'deny', reason: 'policy' }]);
    const req = seen.find((s) => s.url === '/deny');
    expect(req?.body).toEqual({ hookEvent: 'PreToolUse', toolName: 'exec', toolInput: { command: 'ls' } });
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers.authorization).toBe('Bearer t');
  });

  it('counts non-2xx, junk, redirects and timeouts as failures; 204 is no opinion', async () => {
    const hooks: HooksConfig = {
      PostToolUseFailure: [
        { type: 'http', url: `${base}/500` },
        { type: 'http', url: `${base}/junk` },
        { type: 'http', url: `${base}/redirect` },
        { type: 'http', url: `${base}/slow`, timeoutMs: 250 },
        { type: 'http', url: `${base}/empty` },
      ],
    };
    const log = recorder();
    const started = Date.now();
    const r = await runHooks('PostToolUseFailure', { toolName: 'x' }, hooks, log);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(r.opinions).toEqual([]);
    expect(r.failures.map((f) => [f.kind, f.hook])).toEqual([
      ['http', `http:${base}/500`],
      ['bad_output', `http:${base}/junk`],
      ['http', `http:${base}/redirect`],
      ['timeout', `http:${base}/slow`],
    ]);
    expect(r.failures[0]?.error).toBe('answered HTTP 500');
    expect(log.entries).toHaveLength(4);
  });

  it('a failing PermissionRequest http hook marks the result failed', async () => {
    const r = await runHooks(
      'PermissionRequest',
      { toolName: 'x' },
      { PermissionRequest: [{ type: 'http', url: `${base}/slow`, timeoutMs: 200 }] },
      recorder(),
    );
    expect(r).toMatchObject({ status: 'failed', failures: [{ kind: 'timeout' }] });
  });
});

describe('PreToolUse hooks in the pipeline', () => {
  it('feeds command hook opinions (deny, rewrite) into decidePermission', async () => {
    const guard = script(
      'guard',
      `${READ_STDIN}
      if (p.toolInput.path.startsWith('secrets/')) process.stdout.write(JSON.stringify({ decision: 'deny', reason: 'secrets are off limits for ' + p.sessionId }));
      else process.stdout.write(JSON.stringify({ decision: 'allow', updatedInput: { ...p.toolInput, path: 'drafts/' + p.toolInput.path } }));`,
    );
    const preToolUse = preToolUseFromHooks({ PreToolUse: [{ ...guard, matcher: 'write_file' }] }, recorder());
    const denied = await decidePermission({ tool: writeFile, input: { path: 'secrets/k' }, ctx: ctx() }, env({ preToolUse }));
    expect(denied).toEqual({ behavior: 'deny', source: 'hook', reason: 'secrets are off limits for s1' });
    const rewritten = await decidePermission({ tool: writeFile, input: { path: 'a.md' }, ctx: ctx() }, env({ preToolUse }));
    expect(rewritten).toMatchObject({ behavior: 'allow', source: 'hook', updatedInput: { path: 'drafts/a.md' } });
  });
});
