import { describe, expect, it } from 'vitest';
import { connectWs, mcpFixturePath, type RecordedRequest, startGateway } from '@switchboard/testkit';
import { bearer, chat, toolResultFor, useFakeModel } from './helpers.js';

const env = useFakeModel();

/** 40 catalog tools plus the fixture's own six: 46 MCP tools, all deferrable. */
const EXTRA_TOOLS = 40;

const mcpConfig = (extra: Record<string, unknown> = {}) => ({
  mcpServers: { fx: { command: process.execPath, args: [mcpFixturePath()], env: { MCP_FIXTURE_EXTRA_TOOLS: String(EXTRA_TOOLS) } } },
  permissions: { allow: ['mcp__fx'] },
  // The `full` profile includes MCP tools.
  agents: { default: { tools: { profile: 'full' } } },
  ...extra,
});

type Body = RecordedRequest['body'];
const toolNames = (body: Body) => (body.tools ?? []).map((t) => t.name);
const systemText = (body: Body) => (Array.isArray(body.system) ? body.system.map((b) => (b as { text?: string }).text ?? '').join('\n') : '');
/** The cached prefix of a request as sent: its tools and its system blocks, serialized. */
const prefixOf = (body: Body) => JSON.stringify({ tools: body.tools ?? [], system: body.system ?? [] });
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('deferred tool schemas (issue 15, acceptance 5)', () => {
  it('with 40 MCP tools the first request carries names only; tool_search loads a schema, which the next request carries and which then runs', async () => {
    const { fake } = env;
    let gw = await startGateway({ modelUrl: fake.url, config: mcpConfig() });
    let ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });

    // Two turns without a load: byte-identical tools and system.
    const first = fake.requests.length;
    await chat(ws, 'd1', 'hello');
    await chat(ws, 'd2', 'hello again');
    const [a, b] = [fake.requests[first]!.body, fake.requests[first + 1]!.body];
    expect(prefixOf(a)).toBe(prefixOf(b));
    // The fake's prompt cache agrees: the second request reads the prefix the first one wrote.
    expect(fake.requests[first + 1]!.usage!.cache_read_input_tokens).toBeGreaterThan(1024);

    // Names only: no catalog schema in `tools`, tool_search offered, the catalog listed in the system block.
    const names = toolNames(a);
    expect(names).toContain('tool_search');
    expect(names.filter((n) => n.startsWith('mcp__fx__'))).toEqual([]);
    expect(names).toContain('read_file');
    const listing = systemText(a);
    for (let i = 1; i <= EXTRA_TOOLS; i++) expect(listing).toContain(`mcp__fx__catalog_${String(i).padStart(2, '0')}`);
    expect(listing).toContain('mcp__fx__catalog_07: [MCP server fx] Looks up entries in record set 7 (topic-7)');
    const deferredBytes = bytes(fake.requests[first]!.rawBody);
    console.log(`deferred first request: ${deferredBytes} bytes (tools ${bytes(JSON.stringify(a.tools))}, system ${bytes(JSON.stringify(a.system))})`);

    // The model searches, then calls the loaded tool.
    const searchAt = fake.requests.length;
    fake.enqueue(
      { toolUses: [{ name: 'tool_search', input: { query: 'topic-7 record set' }, id: 'toolu_search' }] },
      { toolUses: [{ name: 'mcp__fx__catalog_07', input: { query: 'apples', limit: 3 }, id: 'toolu_catalog' }] },
      { text: 'Found the apples.' },
    );
    const turn = await chat(ws, 'd3', 'find apples in topic 7');
    expect(turn.end).toMatchObject({ type: 'final', text: 'Found the apples.' });
    const found = toolResultFor(fake, 'toolu_search');
    expect(found.is_error ?? false).toBe(false);
    expect(found.content).toMatch(/^tool_search loaded: mcp__fx__catalog_07\n/);
    expect(found.content).toContain('"input_schema"');

    const after = fake.requests[searchAt + 1]!.body;
    const loaded = (after.tools ?? []).find((t) => t.name === 'mcp__fx__catalog_07') as { input_schema?: { properties?: Record<string, unknown> } } | undefined;
    expect(loaded?.input_schema?.properties).toHaveProperty('query');
    expect(toolNames(after).filter((n) => n.startsWith('mcp__fx__'))).toEqual(['mcp__fx__catalog_07']);
    // Loaded: no longer listed as deferred.
    expect(systemText(after)).not.toContain('mcp__fx__catalog_07:');
    expect(systemText(after)).toContain('mcp__fx__catalog_08:');
    expect(toolResultFor(fake, 'toolu_catalog')).toMatchObject({ content: 'catalog_07 found apples (limit 3)' });
    // No load between the turn's last two requests: the prefix did not change.
    expect(prefixOf(fake.requests[searchAt + 2]!.body)).toBe(prefixOf(after));
    // The load wrote a new prefix once; the next request reads it.
    expect(after.tools).not.toEqual(fake.requests[searchAt]!.body.tools);
    expect(fake.requests[searchAt + 1]!.usage!.cache_read_input_tokens).toBe(0);
    expect(fake.requests[searchAt + 2]!.usage!.cache_read_input_tokens).toBeGreaterThan(1024);

    // A later turn, and a restart, keep the loaded schema (derived from the session's transcript).
    const later = fake.requests.length;
    await chat(ws, 'd4', 'thanks');
    expect(prefixOf(fake.requests[later]!.body)).toBe(prefixOf(after));
    ws.close();
    gw = await gw.restart();
    ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
    const restarted = fake.requests.length;
    await chat(ws, 'd5', 'still there?');
    expect(toolNames(fake.requests[restarted]!.body)).toContain('mcp__fx__catalog_07');
    expect(prefixOf(fake.requests[restarted]!.body)).toBe(prefixOf(after));
    ws.close();
    await gw.stop();
  });

  it('measures the first request with deferral off (every schema in `tools`) against deferral on', async () => {
    const { fake } = env;
    const sizes: Record<string, number> = {};
    for (const enabled of [false, true]) {
      const gw = await startGateway({ modelUrl: fake.url, config: mcpConfig({ tools: { deferral: { enabled } } }) });
      const ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
      const at = fake.requests.length;
      await chat(ws, `m-${enabled}`, 'hello');
      const req = fake.requests[at]!;
      sizes[enabled ? 'deferred' : 'undeferred'] = bytes(req.rawBody);
      if (!enabled) expect(toolNames(req.body).filter((n) => n.startsWith('mcp__fx__catalog_'))).toHaveLength(EXTRA_TOOLS);
      else expect(toolNames(req.body).filter((n) => n.startsWith('mcp__fx__'))).toEqual([]);
      ws.close();
      await gw.stop();
    }
    console.log(`first request: undeferred ${sizes.undeferred} bytes, deferred ${sizes.deferred} bytes`);
    expect(sizes.deferred!).toBeLessThan(sizes.undeferred! / 2);
  });
});
