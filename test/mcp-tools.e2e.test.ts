import { existsSync, mkdtempSync, readFileSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectWs, mcpFixturePath, startGateway } from '@switchboard/testkit';
import { bearer, chat, isEnd, useFakeModel } from './helpers.js';

const env = useFakeModel();
const dir = mkdtempSync(join(tmpdir(), 'swb-mcp-e2e-'));

/** Resolves once the fixture's log file contains `text` (fs.watch, bounded). */
function waitForLine(file: string, text: string, timeoutMs = 15_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => existsSync(file) && readFileSync(file, 'utf8').includes(text);
    if (check()) return resolve();
    const timer = setTimeout(() => {
      w.close();
      reject(new Error(`"${text}" never appeared in ${file}`));
    }, timeoutMs);
    const settle = () => {
      if (!check()) return;
      clearTimeout(timer);
      w.close();
      resolve();
    };
    const w = watch(dir, settle);
    // The line may have been written between the first check and the watcher starting.
    settle();
  });
}

const mcpConfig = (log: string, extra: Record<string, unknown> = {}) => ({
  mcpServers: { fx: { command: process.execPath, args: [mcpFixturePath()], env: { MCP_FIXTURE_LOG: log } } },
  permissions: { allow: ['mcp__fx'] },
  // The `full` profile includes MCP tools (`coding` is the file tools only).
  agents: { default: { tools: { profile: 'full' } } },
  ...extra,
});

type Body = { tools?: Array<{ name: string }>; messages: Array<{ content: Array<{ tool_use_id?: string; content?: string; is_error?: boolean }> }> };

describe('MCP tools', () => {
  it('are offered to the model, and a tool that overruns its timeout is aborted with an is_error result', async () => {
    const { fake } = env;
    const log = join(dir, 'timeout.log');
    const gw = await startGateway({ modelUrl: fake.url, config: mcpConfig(log, { limits: { toolTimeouts: { mcp__fx__slow: '300ms' } } }) });
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    const start = fake.requests.length;
    fake.enqueue(
      {
        toolUses: [
          { name: 'mcp__fx__echo', input: { text: 'ping' }, id: 'toolu_echo' },
          { name: 'mcp__fx__slow', input: { ms: 60_000 }, id: 'toolu_slow' },
        ],
      },
      { text: 'The slow tool timed out.' },
    );
    const turn = await chat(ws, 'm1', 'use the MCP tools');
    expect(turn.end).toMatchObject({ type: 'final', text: 'The slow tool timed out.' });
    const names = ((fake.requests[start]!.body as Body).tools ?? []).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__fx__echo', 'mcp__fx__slow']));
    const [echo, slow] = (fake.requests[start + 1]!.body as Body).messages.at(-1)!.content;
    expect(echo).toMatchObject({ tool_use_id: 'toolu_echo', content: 'ping' });
    expect(slow).toMatchObject({ tool_use_id: 'toolu_slow', is_error: true });
    expect(slow!.content).toMatch(/did not finish within 300 ms/);
    await waitForLine(log, 'slow cancelled');
    expect(readFileSync(log, 'utf8')).not.toContain('slow finished');
    ws.close();
    await gw.stop();
  });

  it('a non-read-only call running when the gateway is SIGKILLed comes back as "interrupted", and the turn finishes once', async () => {
    const { fake } = env;
    const log = join(dir, 'kill.log');
    let gw = await startGateway({ modelUrl: fake.url, config: mcpConfig(log) });
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    fake.enqueue({ toolUses: [{ name: 'mcp__fx__slow', input: { ms: 60_000 }, id: 'toolu_killed' }] });
    ws.send({ type: 'message', clientId: 'k1', text: 'run the slow job' });
    await ws.next((f) => f.type === 'tool' && f.phase === 'start');
    await waitForLine(log, 'slow started');
    await gw.kill('SIGKILL');
    ws.close();
    fake.enqueue({ text: 'The job was interrupted; please check before retrying.' });
    const before = fake.requests.length;
    gw = await gw.restart();
    const ws2 = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    ws2.send({ type: 'hello', cursor: 0 });
    const end = await ws2.next((f) => isEnd(f) && f.clientId === 'k1', 20_000);
    expect(end).toMatchObject({ type: 'final', text: 'The job was interrupted; please check before retrying.' });
    expect(fake.requests.length - before).toBe(1);
    const result = (fake.requests.at(-1)!.body as Body).messages.at(-1)!.content[0]!;
    expect(result).toMatchObject({ tool_use_id: 'toolu_killed', is_error: true });
    expect(result.content).toMatch(/restarted while mcp__fx__slow was running/);
    // The session keeps working.
    const next = await chat(ws2, 'k2', 'thanks');
    expect(next.end).toMatchObject({ type: 'final', text: 'echo: thanks' });
    expect(ws2.frames.filter((f) => isEnd(f) && f.clientId === 'k1')).toHaveLength(1);
    ws2.close();
  });
});
