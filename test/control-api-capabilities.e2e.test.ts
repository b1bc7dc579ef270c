import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  connectWs,
  mcpFixturePath,
  runCli,
  startFakeAnthropic,
  startGateway,
  stopAllGateways,
  type FakeAnthropic,
  type GatewayProcess,
  type WsClient,
} from '@switchboard/testkit';
import { bearer, chat, connectPerson, type RequestTool, toolsOfTurn } from './helpers.js';

// The capability registry and per-scope switches. Acceptance 7: the tools offered to the model
// for a member differ from those for the owner exactly as the policy says (asserted on the fake
// model's recorded requests).

let fake: FakeAnthropic;
let gw: GatewayProcess;
let op: string;
let owner: WsClient;
let member: WsClient;
let memberId: string;
let turn = 0;

type ToolDef = RequestTool;

/** Chats once and returns the `tools` array of the model request that turn made. */
const toolsOffered = (ws: WsClient): Promise<ToolDef[]> => toolsOfTurn(fake, ws, `c${++turn}`);
const names = (tools: ToolDef[]) => tools.map((t) => t.name);

beforeAll(async () => {
  fake = await startFakeAnthropic();
  gw = await startGateway({ modelUrl: fake.url });
  op = gw.credentials().operatorToken;
  const m1 = await connectPerson(gw, 'm1', 'member');
  memberId = m1.principalId;
  owner = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
  member = m1.ws;
});
afterAll(async () => {
  await owner?.close();
  await member?.close();
  await stopAllGateways();
  await fake.close();
});

describe('capability registry', () => {
  it('lists tools with schemas and risk facts, channels, the model provider, groups and profiles', async () => {
    const res = await api(gw, 'GET', '/api/v1/capabilities', { token: op });
    expect(res.status).toBe(200);
    const byId = new Map((res.json.capabilities as any[]).map((c) => [c.id, c]));
    expect(byId.get('read_file')).toMatchObject({
      kind: 'tool',
      source: 'builtin',
      groups: ['group:fs'],
      risk: { readOnly: true, destructive: false, concurrencySafe: true, openWorld: false },
    });
    expect(byId.get('read_file').inputSchema).toMatchObject({ type: 'object', required: ['path'] });
    expect(byId.get('write_file').risk).toMatchObject({ readOnly: false, destructive: true, openWorld: false });
    expect(byId.get('websocket:default')).toMatchObject({ kind: 'channel', source: 'websocket' });
    expect(byId.get('model:anthropic')).toMatchObject({ kind: 'model', detail: { model: 'claude-test', configured: true } });
    expect(JSON.stringify(res.json)).not.toContain((gw.config.model as { apiKey: string }).apiKey);
    expect(res.json.groups['group:fs']).toEqual(['read_file', 'list_files', 'search_files', 'write_file', 'edit_file', 'send_file']);
    expect(res.json.groups['group:web']).toEqual(['web_fetch']); // web_search only with tools.webSearch.provider
    expect(byId.get('web_fetch').risk).toMatchObject({ readOnly: true, destructive: false, openWorld: true });
    expect(res.json.profiles.minimal).toEqual(['read_file', 'list_files', 'search_files']);
    expect(res.json.groups['group:memory']).toEqual(['memory_save', 'memory_search', 'memory_forget']);
    expect(res.json.profiles.messaging).toEqual(['web_fetch', 'memory_save', 'memory_search', 'memory_forget']);
    // Every agent that offers tools also offers read_result (it pages stored tool results).
    expect(res.json.agents.default).toEqual([...res.json.profiles.coding, 'read_result']);
    expect(byId.get('read_result')).toMatchObject({ kind: 'tool', source: 'builtin', risk: { readOnly: true, destructive: false, concurrencySafe: true } });
    const tools = await api(gw, 'GET', '/api/v1/capabilities?kind=tool', { token: op });
    expect((tools.json.capabilities as any[]).every((c) => c.kind === 'tool')).toBe(true);
    expect((await api(gw, 'GET', '/api/v1/capabilities/edit_file', { token: op })).json.capability.id).toBe('edit_file');
  });

  it('disabling write_file for members hides it from members only, and enabling brings it back', async () => {
    const ownerBefore = await toolsOffered(owner);
    expect(names(ownerBefore)).toContain('write_file');
    // exec is offered to owners and admins only (its offeredTo default); everything else to both.
    expect(names(ownerBefore)).toContain('exec');
    const memberBefore = ownerBefore.filter((t) => t.name !== 'exec');
    expect(await toolsOffered(member)).toEqual(memberBefore);

    const off = await api(gw, 'PUT', '/api/v1/capabilities/write_file', { token: op, body: { scope: { kind: 'role', id: 'member' }, enabled: false } });
    expect(off.status).toBe(200);
    expect(off.json).toMatchObject({ id: 'write_file', enabled: false, changed: true });
    expect(off.json.capability.disabledAt).toEqual([{ kind: 'role', id: 'member', ruleId: expect.any(String) }]);
    const again = await api(gw, 'PUT', '/api/v1/capabilities/write_file', { token: op, body: { scope: { kind: 'role', id: 'member' }, enabled: false } });
    expect(again.json.changed).toBe(false);
    const rules = await api(gw, 'GET', '/api/v1/rules?scopeKind=role', { token: op });
    expect(rules.json.rules).toEqual([
      expect.objectContaining({ scope: { kind: 'role', id: 'member' }, behavior: 'deny', rule: 'write_file', createdBy: 'operator:bootstrap-operator' }),
    ]);

    const ownerTools = await toolsOffered(owner);
    const memberTools = await toolsOffered(member);
    expect(ownerTools).toEqual(ownerBefore);
    expect(memberTools).toEqual(memberBefore.filter((t) => t.name !== 'write_file'));

    const on = await api(gw, 'PUT', '/api/v1/capabilities/write_file', { token: op, body: { scope: { kind: 'role', id: 'member' }, enabled: true } });
    expect(on.json).toMatchObject({ enabled: true, changed: true, capability: { disabledAt: [] } });
    expect(await toolsOffered(member)).toEqual(memberBefore);

    const audit = await api(gw, 'GET', '/api/v1/audit?actor=operator:bootstrap-operator', { token: op });
    const actions = (audit.json.entries as any[]).map((e) => `${e.action} ${e.target}`);
    expect(actions).toEqual(expect.arrayContaining(['capability.disable write_file', 'capability.enable write_file']));
  });

  it('a group:fs deny rule at one principal removes every file tool for that person alone', async () => {
    const created = await api(gw, 'POST', '/api/v1/rules', {
      token: op,
      body: { scope: { kind: 'principal', id: memberId }, behavior: 'deny', rule: 'group:fs' },
    });
    expect(created.status).toBe(201);
    expect(names(await toolsOffered(member))).toEqual(['memory_forget', 'memory_save', 'memory_search', 'read_result', 'web_fetch']);
    expect(names(await toolsOffered(owner))).toContain('read_file');
    expect((await api(gw, 'DELETE', `/api/v1/rules/${created.json.rule.id}`, { token: op })).status).toBe(200);
    expect(names(await toolsOffered(member))).toContain('read_file');
  });
});

describe('tool profiles and groups in the config', () => {
  it('offers each agent the tools of its profile; MCP tools only through full or group:mcp', async () => {
    const other = await startGateway({
      modelUrl: fake.url,
      config: {
        agents: {
          default: { tools: { profile: 'minimal' } },
          everything: { tools: { profile: 'full' } },
          mixed: { tools: { profile: ['minimal', 'group:mcp'] } },
          plain: {},
        },
        mcpServers: { fx: { command: process.execPath, args: [mcpFixturePath()] } },
        permissions: { deny: ['group:fs(secrets/**)'] },
      },
    });
    const res = await api(other, 'GET', '/api/v1/capabilities', { token: other.credentials().operatorToken });
    const echo = (res.json.capabilities as any[]).find((c) => c.id === 'mcp__fx__echo');
    expect(echo).toMatchObject({ kind: 'tool', source: 'mcp:fx', groups: ['group:mcp'], risk: { readOnly: false, openWorld: true } }); // readOnlyHint untrusted without trustAnnotations
    const mcp = res.json.groups['group:mcp'] as string[];
    expect(mcp).toContain('mcp__fx__echo');
    expect(res.json.agents.default).toEqual(['read_file', 'list_files', 'search_files', 'read_result']);
    expect(res.json.groups['group:runtime']).toEqual(['exec']);
    const memory = res.json.groups['group:memory'] as string[];
    expect(res.json.agents.everything).toEqual([...res.json.groups['group:fs'], 'web_fetch', 'exec', ...memory, ...mcp, 'read_result']);
    expect(res.json.agents.mixed).toEqual(['read_file', 'list_files', 'search_files', ...mcp, 'read_result']);
    expect(res.json.agents.plain).toEqual([...res.json.groups['group:fs'], 'web_fetch', 'exec', ...memory, 'read_result']);

    const ws = await connectWs(other.wsUrl, { headers: bearer(other.credentials().clientToken) });
    const before = fake.requests.length;
    await chat(ws, 'p1', 'hi');
    // The model client sends tools sorted by name (a byte-stable prompt-cache prefix).
    expect(names((fake.requests[before]!.body.tools ?? []) as ToolDef[])).toEqual(['list_files', 'read_file', 'read_result', 'search_files']);
    await ws.close();
    await other.stop();
  });

  it('refuses an unknown group in the config with exit code 78', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-cap-'));
    const file = join(dir, 'bad.json5');
    writeFileSync(file, JSON.stringify({ gateway: { port: 0, dataDir: join(dir, 'data') }, permissions: { deny: ['group:nope'] } }));
    const res = await runCli(['start', '--config', file]);
    expect(res.code).toBe(78);
    expect(res.stderr).toContain('permissions.deny.0');
    expect(res.stderr).toContain('unknown tool group');
  });
});
