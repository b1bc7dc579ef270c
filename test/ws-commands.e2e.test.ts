import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectWs, runCli, type WsClient } from '@switchboard/testkit';
import { askFrame, bearer, chat, connectClient, personWorkspace, useGateway } from './helpers.js';

// Issue 13 item 5 and acceptance 8 (WebSocket): `{type:"command", name, args?}` runs a chat
// command as the client token's principal, in that person's own session; `/context` answers a
// `context` frame, the older commands `command_result` (or the frame their own client frame
// answers); unknown names, bad shapes and unauthenticated sockets get clear errors.

// The `minimal` profile keeps the tool schemas (a handful of tools) below one long message of history.
const env = useGateway({
  config: { models: { 'claude-test': { contextWindow: 50_000, outputReserve: 5_000 } }, agents: { default: { tools: { profile: 'minimal' } } } },
});

const LONG = Array.from({ length: 375 }, (_, i) => `word${i}`).join(' ');

const owner = (): Promise<WsClient> => connectClient(env.gw);

const ask = askFrame;

describe('WebSocket command frames', () => {
  it('context: the report of your own session, the consumers largest first, without a model call', async () => {
    const { fake, gw } = env;
    const ws = await owner();
    const turn = await chat(ws, 'ctx-1', LONG);
    // The final goes out before the turn's end (its entries) is stored: `/context` reports what is stored.
    await gw.waitForLog((l) => l.includes('turn finished') && l.includes(String(turn.end.turnId)));
    const u = fake.requests.at(-1)!.usage!;
    const counted = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
    const calls = fake.requests.length;
    const f = await ask(ws, { type: 'command', name: 'context' }, 'context');
    expect(f).toMatchObject({
      type: 'context',
      outcome: 'report',
      report: { model: 'claude-test', contextWindow: 50_000, window: 45_000, messages: 2, clearedResults: 0, lastCompaction: null },
    });
    const report = f.report as { tokens: number; consumers: Array<{ name: string; tokens: number }> };
    expect(report.tokens).toBeGreaterThan(counted);
    expect(report.tokens).toBeLessThan(counted * 2);
    expect(report.consumers.map((c) => c.name).sort()).toEqual(['history', 'summary', 'system', 'tool_results', 'tools']);
    expect(report.consumers[0]!.name).toBe('history');
    const counts = report.consumers.map((c) => c.tokens);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(report.consumers.find((c) => c.name === 'summary')!.tokens).toBe(0);
    expect(fake.requests.length).toBe(calls);

    // Another person's command reports that person's session, not the owner's.
    const member = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'mia', '--role', 'member'], { gateway: gw })).stdout) as {
      secret: string;
    };
    const other = await connectWs(gw.wsUrl, { headers: bearer(member.secret) });
    await other.next((x) => x.type === 'hello_ok');
    const theirs = await ask(other, { type: 'command', name: '/CONTEXT' }, 'context');
    expect(theirs.report).toMatchObject({ messages: 0 });
    expect(theirs.report.tokens).toBeLessThan(report.tokens);
    await other.close();
    await ws.close();
  });

  it('the chat commands: status, stop and mode answer command_result; new and mode <m> the frames of their own client frames', async () => {
    const ws = await owner();
    const status = await ask(ws, { type: 'command', name: 'status' }, 'command_result');
    expect(status).toMatchObject({ command: 'status', outcome: 'status', status: { model: 'claude-test', running: false } });
    expect(await ask(ws, { type: 'command', name: 'stop' }, 'command_result')).toEqual({ type: 'command_result', command: 'stop', outcome: 'idle' });
    const usage = await ask(ws, { type: 'command', name: 'mode' }, 'command_result');
    expect(usage).toMatchObject({ command: 'mode', outcome: 'usage', modes: expect.arrayContaining(['plan', 'default']) });
    expect(await ask(ws, { type: 'command', name: 'mode', args: 'plan' }, 'mode_ok')).toEqual({ type: 'mode_ok', mode: 'plan' });
    const refused = await ask(ws, { type: 'command', name: 'mode', args: 'nonsense' }, 'error');
    expect(refused).toMatchObject({ code: 'mode_refused', message: expect.stringContaining('unknown mode') });
    expect((await ask(ws, { type: 'command', name: 'status' }, 'command_result')).status.mode).toBe('plan');
    expect(await ask(ws, { type: 'command', name: 'new' }, 'session_reset')).toEqual({ type: 'session_reset' });
    expect((await ask(ws, { type: 'command', name: 'context' }, 'context')).report.messages).toBe(0);
    await ws.close();
  });

  it('context after a restart: the newest compaction boundary and the results a microcompact marker cleared', async () => {
    const { fake } = env;
    let ws = await owner();
    await ask(ws, { type: 'command', name: 'new' }, 'session_reset');
    writeFileSync(join(personWorkspace(env.gw), 'big.txt'), 'a line of the notes\n'.repeat(300));
    fake.enqueue({ toolUses: [{ name: 'read_file', input: { path: 'big.txt' }, id: 'toolu_ctx' }] }, { text: 'Read your notes.' });
    const turn = await chat(ws, 'ctx-tool', 'read my notes');
    expect(turn.end).toMatchObject({ type: 'final', text: 'Read your notes.' });
    await env.gw.waitForLog((l) => l.includes('turn finished') && l.includes(String(turn.end.turnId)));
    const before = (await ask(ws, { type: 'command', name: 'context' }, 'context')).report;
    expect(before).toMatchObject({ clearedResults: 0, lastCompaction: null });
    const results = (r: typeof before) => (r.consumers as Array<{ name: string; tokens: number }>).find((c) => c.name === 'tool_results')!.tokens;
    expect(results(before)).toBeGreaterThan(0);
    await ws.close();

    // The entries the compaction and microcompact shapers append (the brief's formats), written
    // while the gateway is down: after the restart the report is rebuilt from the store.
    await env.gw.stop();
    const db = new Database(join(env.gw.dataDir, 'switchboard.db'), { fileMustExist: true });
    const { principalId } = env.gw.credentials();
    const session = db.prepare('select id from sessions where principal_id = ? and ended_at is null').get(principalId) as { id: string };
    const { seq } = db.prepare('select max(seq) as seq from entries where session_id = ?').get(session.id) as { seq: number };
    const at = Date.parse('2026-12-01T21:05:00Z');
    const insert = db.prepare('insert into entries (session_id, seq, turn_id, kind, payload, created_at) values (?, ?, null, ?, ?, ?)');
    const boundary = {
      summary: 'The person asked for their files.',
      throughSeq: 0,
      trigger: 'manual',
      tokensBefore: 5_000,
      tokensAfter: 300,
      model: 'claude-test',
    };
    insert.run(session.id, seq + 1, 'compact', JSON.stringify(boundary), at);
    insert.run(session.id, seq + 2, 'microcompact', JSON.stringify({ cleared: ['toolu_ctx'], tokensBefore: 400, tokensAfter: 80 }), at + 1000);
    db.close();
    env.gw = await env.gw.restart();

    ws = await owner();
    const after = (await ask(ws, { type: 'command', name: 'context' }, 'context')).report;
    expect(after.lastCompaction).toEqual({ at: '2026-12-01T21:05:00.000Z', trigger: 'manual', tokensBefore: 5_000, tokensAfter: 300 });
    expect(after.clearedResults).toBe(1);
    // The 6,000-character result now counts as its one-line placeholder.
    expect(results(before)).toBeGreaterThan(1_000);
    expect(results(after)).toBeLessThan(100);
    expect(after.tokens).toBeLessThan(before.tokens - 1_000);
    await ws.close();
  });

  it('unknown names and bad shapes get one error frame each and run nothing', async () => {
    const { fake } = env;
    const ws = await owner();
    const calls = fake.requests.length;
    for (const name of ['frobnicate', '__proto__', 'constructor', '/toString']) {
      const e = await ask(ws, { type: 'command', name }, 'error');
      expect(e.code).toBe('unknown_command');
      expect(e.message).toContain('expected one of new, status, stop, mode, compact, context');
    }
    const bad: unknown[] = [
      { type: 'command' },
      { type: 'command', name: 7 },
      { type: 'command', name: '' },
      { type: 'command', name: 'con text' },
      { type: 'command', name: '//context' },
      { type: 'command', name: 'x'.repeat(40) },
      { type: 'command', name: 'context', args: { text: 'plan' } },
      { type: 'command', name: 'context', args: 'x'.repeat(4001) },
      { type: 'command', name: 'context', extra: true },
      { type: 'command', name: ['context'] },
    ];
    for (const frame of bad) {
      const e = await ask(ws, frame, 'error');
      expect(e.code, JSON.stringify(frame).slice(0, 80)).toBe('bad_frame');
      expect(e.message).toMatch(/^Invalid command frame: /);
    }
    expect(fake.requests.length).toBe(calls);
    // Still answering afterwards.
    expect((await ask(ws, { type: 'command', name: 'stop' }, 'command_result')).outcome).toBe('idle');
    await ws.close();
  });

  it('an unauthenticated socket cannot run a command: the frame closes it', async () => {
    const ws = await connectWs(env.gw.wsUrl);
    ws.send({ type: 'command', name: 'status' });
    expect(await ws.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'the first frame must be a hello with a token' });
    expect(ws.frames).toEqual([]);
  });

  it('a socket whose token was revoked is closed before its command runs', async () => {
    const { gw } = env;
    const made = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'rex', '--role', 'member'], { gateway: gw })).stdout) as {
      secret: string;
      tokenId: string;
    };
    const ws = await connectWs(gw.wsUrl, { headers: bearer(made.secret) });
    await ws.next((f) => f.type === 'hello_ok');
    expect((await runCli(['token', 'revoke', made.tokenId], { gateway: gw })).code).toBe(0);
    ws.send({ type: 'command', name: 'status' });
    expect(await ws.waitClose(5_000)).toMatchObject({ code: 1008, reason: 'token revoked' });
    expect(ws.frames.filter((f) => f.type === 'command_result' || f.type === 'error')).toEqual([]);
  });
});
