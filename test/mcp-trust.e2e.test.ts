import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectWs, mcpFixturePath, startGateway } from '@switchboard/testkit';
import { bearer, chat, useFakeModel } from './helpers.js';

const env = useFakeModel();
const dir = mkdtempSync(join(tmpdir(), 'swb-mcp-trust-'));

/** One gateway with the fixture MCP server (`echo` and `big` carry readOnlyHint). */
const config = (server: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  mcpServers: { fx: { command: process.execPath, args: [mcpFixturePath()], env: { MCP_FIXTURE_LOG: join(dir, 'fx.log') }, ...server } },
  agents: { default: { tools: { profile: 'full' }, mode: 'plan' } },
  ...extra,
});

type Body = { messages: Array<{ content: Array<{ tool_use_id?: string; content?: string; is_error?: boolean }> }> };
type Capability = { id: string; risk?: { readOnly: boolean; concurrencySafe: boolean } };

async function echoInPlanMode(server: Record<string, unknown>) {
  const { fake } = env;
  const gw = await startGateway({ modelUrl: fake.url, config: config(server) });
  const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
  fake.enqueue({ toolUses: [{ name: 'mcp__fx__echo', input: { text: 'ping' }, id: 'toolu_echo' }] }, { text: 'done' });
  const turn = await chat(ws, 'e1', 'echo ping');
  expect(turn.end).toMatchObject({ type: 'final', text: 'done' });
  const result = (fake.requests.at(-1)!.body as Body).messages.at(-1)!.content[0]!;
  const caps = (await (await fetch(`${gw.url}/api/v1/capabilities`, { headers: bearer(gw.credentials().operatorToken) })).json()) as {
    capabilities: Capability[];
  };
  const echo = caps.capabilities.find((c) => c.id === 'mcp__fx__echo');
  ws.close();
  await gw.stop();
  return { result, echo };
}

describe('MCP annotations are hints: the operator decides how far a server is trusted', () => {
  it('an untrusted server’s readOnlyHint does not make its tool read-only: plan mode refuses it', async () => {
    const { result, echo } = await echoInPlanMode({});
    expect(result).toMatchObject({ tool_use_id: 'toolu_echo', is_error: true });
    expect(result.content).toMatch(/plan mode/);
    expect(echo?.risk).toMatchObject({ readOnly: false, concurrencySafe: false });
  });

  it('with trustAnnotations: true the hint counts, and the tool runs in plan mode', async () => {
    const { result, echo } = await echoInPlanMode({ trustAnnotations: true });
    expect(result).toMatchObject({ tool_use_id: 'toolu_echo', content: 'ping' });
    expect(result.is_error).toBeUndefined();
    expect(echo?.risk).toMatchObject({ readOnly: true, concurrencySafe: true });
  });

  it('readOnlyTools still marks a tool read-only without trusting the server’s hints', async () => {
    const { result, echo } = await echoInPlanMode({ readOnlyTools: ['echo'] });
    expect(result).toMatchObject({ tool_use_id: 'toolu_echo', content: 'ping' });
    expect(echo?.risk).toMatchObject({ readOnly: true });
  });

  it('every tool has a default result cap (limits.toolResultMaxChars): an MCP result is cut with a note, and kept whole in the store', async () => {
    const { fake } = env;
    const gw = await startGateway({
      modelUrl: fake.url,
      config: config({}, { agents: { default: { tools: { profile: 'full' } } }, permissions: { allow: ['mcp__fx'] }, limits: { toolResultMaxChars: 1000 } }),
    });
    const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    fake.enqueue({ toolUses: [{ name: 'mcp__fx__big', input: { chars: 5000 }, id: 'toolu_big' }] }, { text: 'big done' });
    const turn = await chat(ws, 'b1', 'make it big');
    expect(turn.end).toMatchObject({ type: 'final', text: 'big done' });
    const result = (fake.requests.at(-1)!.body as Body).messages.at(-1)!.content[0]!;
    expect(result.content!.startsWith('0123456789'.repeat(100))).toBe(true);
    expect(result.content).toMatch(/\[output cut: showing 1000 of 5000 characters; the full result is kept in the session store\]$/);
    const sessions = (await (await fetch(`${gw.url}/api/v1/sessions`, { headers: bearer(gw.credentials().operatorToken) })).json()) as {
      sessions: Array<{ id: string }>;
    };
    const transcript = (await (
      await fetch(`${gw.url}/api/v1/sessions/${sessions.sessions[0]!.id}/transcript`, { headers: bearer(gw.credentials().operatorToken) })
    ).json()) as {
      entries: Array<{ kind: string; payload: { fullContent?: string } }>;
    };
    const stored = transcript.entries.find((e) => e.kind === 'tool_result');
    expect(stored?.payload.fullContent).toHaveLength(5000);
    ws.close();
    await gw.stop();
  });
});
