import { describe, expect, it } from 'vitest';
import { alive, bridgeOf, ctx, fixtureLines, fixtureLogPath, fixtureServer, memoryLog, tool, waitFor } from './helpers.js';

describe('MCP bridge against the fixture server', () => {
  it('exposes every fixture tool with its name, risk facts and schema', async () => {
    const bridge = await bridgeOf({ fx: fixtureServer(fixtureLogPath(), { readOnlyTools: ['fail'], trustAnnotations: true }) });
    expect(bridge.tools.map((t) => t.name).sort()).toEqual(
      ['mcp__fx__big', 'mcp__fx__echo', 'mcp__fx__env', 'mcp__fx__fail', 'mcp__fx__mixed', 'mcp__fx__slow'].sort(),
    );
    const echo = tool(bridge, 'mcp__fx__echo');
    expect(echo.readOnly).toBe(true);
    expect(echo.concurrencySafe).toBe(true);
    expect(echo.description).toMatch(/^\[MCP server fx\] Returns its text argument/);
    expect(echo.inputJsonSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(echo.inputJsonSchema).not.toHaveProperty('$schema');
    const slow = tool(bridge, 'mcp__fx__slow');
    expect([slow.readOnly, slow.concurrencySafe]).toEqual([false, false]);
    expect(slow.inputJsonSchema).toMatchObject({ properties: { ms: { type: 'integer' } }, required: ['ms'] });
    expect(tool(bridge, 'mcp__fx__fail').readOnly).toBe(true); // from readOnlyTools
    expect(echo.input.safeParse({ anything: 1 }).success).toBe(true);
    expect(bridge.status()).toEqual([{ server: 'fx', state: 'up', tools: 6, pid: expect.any(Number) }]);
  });

  it('treats readOnlyHint as a hint: without trustAnnotations only readOnlyTools are read-only', async () => {
    const bridge = await bridgeOf({ fx: fixtureServer(fixtureLogPath(), { readOnlyTools: ['fail'] }) });
    const echo = tool(bridge, 'mcp__fx__echo');
    expect([echo.readOnly, echo.concurrencySafe]).toEqual([false, false]);
    const fail = tool(bridge, 'mcp__fx__fail');
    expect([fail.readOnly, fail.concurrencySafe]).toEqual([true, true]);
  });

  it('returns echo text, tool-level errors and summarized mixed content', async () => {
    const bridge = await bridgeOf({ fx: fixtureServer(fixtureLogPath()) });
    expect(await tool(bridge, 'mcp__fx__echo').call({ text: 'hello' }, ctx())).toEqual({ content: 'hello' });
    expect(await tool(bridge, 'mcp__fx__fail').call({}, ctx())).toEqual({
      content: 'the fixture failed on purpose',
      isError: true,
    });
    expect((await tool(bridge, 'mcp__fx__mixed').call({}, ctx())).content).toBe(
      'first\n[image: image/png]\n[resource: file:///fixture/notes.txt]\nembedded notes\n[resource: file:///fixture/other.txt]\nlast',
    );
    const bad = await tool(bridge, 'mcp__fx__echo').call({ text: 5 }, ctx());
    expect(bad.isError).toBe(true);
    expect(bad.content).toMatch(/text/);
  });

  it('runs slow to completion when not aborted', async () => {
    const logPath = fixtureLogPath();
    const bridge = await bridgeOf({ fx: fixtureServer(logPath) });
    expect(await tool(bridge, 'mcp__fx__slow').call({ ms: 200 }, ctx())).toEqual({ content: 'slept 200 ms' });
    expect(fixtureLines(logPath)).toEqual(['slow started ms=200', 'slow finished ms=200']);
  });

  it('cancels slow on abort: the call settles promptly and the server never finishes', async () => {
    const logPath = fixtureLogPath();
    const bridge = await bridgeOf({ fx: fixtureServer(logPath) });
    const ac = new AbortController();
    const pending = tool(bridge, 'mcp__fx__slow').call({ ms: 30_000 }, ctx(ac.signal));
    const settled = pending.then(
      () => 'resolved',
      (err: { code?: string }) => err.code,
    );
    await waitFor('slow to start', () => fixtureLines(logPath).includes('slow started ms=30000'));
    const abortedAt = Date.now();
    ac.abort();
    expect(await settled).toBe('SWB_E_ABORTED');
    expect(Date.now() - abortedAt).toBeLessThan(2000);
    // notifications/cancelled reached the server: its handler saw the abort.
    await waitFor('slow to be cancelled', () => fixtureLines(logPath).includes('slow cancelled ms=30000'));
    expect(fixtureLines(logPath)).not.toContain('slow finished ms=30000');
    // The server is still usable.
    expect(await tool(bridge, 'mcp__fx__echo').call({ text: 'still here' }, ctx())).toEqual({ content: 'still here' });
  });

  it('times a call out after the server timeoutMs', async () => {
    const logPath = fixtureLogPath();
    const bridge = await bridgeOf({ fx: fixtureServer(logPath, { timeoutMs: 300 }) });
    await expect(tool(bridge, 'mcp__fx__slow').call({ ms: 30_000 }, ctx())).rejects.toMatchObject({
      code: 'SWB_E_MCP_TIMEOUT',
      message: 'mcp__fx__slow timed out after 300 ms',
    });
    await waitFor('slow to be cancelled', () => fixtureLines(logPath).includes('slow cancelled ms=30000'));
  });

  it('skips a server whose command does not exist and keeps the others up', async () => {
    const log = memoryLog();
    const bridge = await bridgeOf({ fx: fixtureServer(fixtureLogPath()), ghost: { command: '/nonexistent/mcp-server' } }, 15_000, log);
    expect(bridge.status()).toEqual([
      { server: 'fx', state: 'up', tools: 6, pid: expect.any(Number) },
      { server: 'ghost', state: 'failed', tools: 0, error: expect.stringContaining('ENOENT') },
    ]);
    expect(bridge.tools.every((t) => t.name.startsWith('mcp__fx__'))).toBe(true);
    expect(log.entries).toContainEqual(expect.objectContaining({ level: 'error', obj: expect.objectContaining({ mcpServer: 'ghost' }) }));
  });

  it('fails a server that does not answer within connectTimeoutMs and ends its process', async () => {
    const bridge = await bridgeOf({ mute: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'] } }, 300);
    const [status] = bridge.status();
    expect(status).toMatchObject({ server: 'mute', state: 'failed', tools: 0, error: expect.stringMatching(/300 ms/) });
    expect(status?.pid).toEqual(expect.any(Number));
    expect(alive(status!.pid!)).toBe(false);
  });

  it('gives the child only the safe default environment plus its configured env', async () => {
    process.env.SWB_MCP_TEST_SECRET = 'do-not-leak';
    try {
      const bridge = await bridgeOf({ fx: fixtureServer(fixtureLogPath(), { env: { MCP_FIXTURE_LOG: '/dev/null', EXTRA_VAR: 'x' } }) });
      const names = (await tool(bridge, 'mcp__fx__env').call({}, ctx())).content.split('\n');
      expect(names).toContain('EXTRA_VAR');
      expect(names).toContain('PATH');
      expect(names).not.toContain('SWB_MCP_TEST_SECRET');
    } finally {
      delete process.env.SWB_MCP_TEST_SECRET;
    }
  });

  it('reports a dead server as failed and its calls fail clearly', async () => {
    const logPath = fixtureLogPath();
    const log = memoryLog();
    const bridge = await bridgeOf({ fx: fixtureServer(logPath) }, 15_000, log);
    const pid = bridge.status()[0]?.pid;
    expect(pid).toEqual(expect.any(Number));
    const inFlight = tool(bridge, 'mcp__fx__slow').call({ ms: 30_000 }, ctx());
    inFlight.catch(() => {});
    await waitFor('slow to start', () => fixtureLines(logPath).length > 0);
    process.kill(pid!, 'SIGKILL');
    await expect(inFlight).rejects.toMatchObject({ code: 'SWB_E_MCP_UNAVAILABLE', message: expect.stringMatching(/MCP server "fx" is not available/) });
    await waitFor('status failed', () => bridge.status()[0]?.state === 'failed');
    expect(bridge.status()[0]).toMatchObject({ state: 'failed', error: 'server process exited', pid });
    await expect(tool(bridge, 'mcp__fx__echo').call({ text: 'x' }, ctx())).rejects.toMatchObject({
      code: 'SWB_E_MCP_UNAVAILABLE',
      message: 'mcp__fx__echo failed: MCP server "fx" is not available (server process exited)',
    });
    expect(log.entries).toContainEqual(expect.objectContaining({ level: 'error', msg: expect.stringMatching(/went away/) }));
  });

  it('close() ends every child process and later calls fail', async () => {
    const bridge = await bridgeOf({ a: fixtureServer(fixtureLogPath()), b: fixtureServer(fixtureLogPath()) });
    const pids = bridge.status().map((s) => s.pid);
    expect(pids).toEqual([expect.any(Number), expect.any(Number)]);
    expect(pids.every((p) => alive(p!))).toBe(true);
    const started = Date.now();
    await bridge.close();
    expect(Date.now() - started).toBeLessThan(1500); // the fixture exits when its stdin closes
    expect(pids.filter((p) => alive(p!))).toEqual([]);
    expect(bridge.status().map((s) => s.state)).toEqual(['failed', 'failed']);
    await expect(tool(bridge, 'mcp__a__echo').call({ text: 'x' }, ctx())).rejects.toMatchObject({ code: 'SWB_E_MCP_UNAVAILABLE' });
    await bridge.close(); // idempotent
  });
});
