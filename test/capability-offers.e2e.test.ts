import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  api,
  connectWs,
  runCli,
  startFakeAnthropic,
  startGateway,
  stopAllGateways,
  type FakeAnthropic,
  type GatewayProcess,
  type WsClient,
} from '@switchboard/testkit';
import { bearer, chat, connectPerson, toolsOfTurn } from './helpers.js';

// "Who may use it" (issue 14): a capability's `offeredTo` role defaults decide whom the model is
// offered it for; an operator's allow-switch at a scope offers it there; a deny switch still wins.
// `capabilities.offeredTo: { write_file: ['owner'] }` makes a tool everyone has owner-only, so the
// mechanism is seen on its own (`exec`'s built-in default: exec-permissions.e2e.test.ts).

let fake: FakeAnthropic;
let gw: GatewayProcess;
let op: string;
let owner: WsClient;
let member: WsClient;
let other: WsClient;
let memberId: string;
let turn = 0;

/** Chats once and returns the tool names of the model request that turn made. */
const offered = async (ws: WsClient): Promise<string[]> => (await toolsOfTurn(fake, ws, `o${++turn}`)).map((t) => t.name);

const put = (body: unknown) => api(gw, 'PUT', '/api/v1/capabilities/write_file', { token: op, body });

const connectMember = (name: string) => connectPerson(gw, name, 'member');

beforeAll(async () => {
  fake = await startFakeAnthropic();
  gw = await startGateway({ modelUrl: fake.url, config: { capabilities: { offeredTo: { write_file: ['owner'] } } } });
  op = gw.credentials().operatorToken;
  owner = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
  const m1 = await connectMember('m1');
  member = m1.ws;
  memberId = m1.principalId;
  other = (await connectMember('m2')).ws;
});
afterAll(async () => {
  await owner?.close();
  await member?.close();
  await other?.close();
  await stopAllGateways();
  await fake.close();
});

describe('offeredTo role defaults and allow-switches', () => {
  it('lists offeredTo per tool: the config override and the built-in default (every role)', async () => {
    const res = await api(gw, 'GET', '/api/v1/capabilities?kind=tool', { token: op });
    expect(res.status).toBe(200);
    const byId = new Map((res.json.capabilities as { id: string }[]).map((c) => [c.id, c]));
    expect(byId.get('write_file')).toMatchObject({ offeredTo: ['owner'], enabledAt: [], disabledAt: [] });
    expect(byId.get('read_file')).toMatchObject({ offeredTo: ['owner', 'admin', 'member', 'guest'], enabledAt: [] });
  });

  it('a role outside offeredTo is not offered the tool, and a call to it is answered as an unknown tool', async () => {
    expect(await offered(owner)).toContain('write_file');
    const memberTools = await offered(member);
    expect(memberTools).not.toContain('write_file');
    expect(memberTools).toContain('read_file');

    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'x.txt', content: 'x' }, id: 'toolu_hidden' }] }, { text: 'ok' });
    const before = fake.requests.length;
    await chat(member, `o${++turn}`, 'write it');
    const answer = fake.requests[before + 1]!.body.messages.at(-1)!.content as { type: string; tool_use_id?: string; is_error?: boolean; content?: unknown }[];
    const result = answer.find((b) => b.type === 'tool_result' && b.tool_use_id === 'toolu_hidden');
    expect(result).toMatchObject({ is_error: true });
    expect(JSON.stringify(result?.content)).toContain('There is no tool named \\"write_file\\"');
  });

  it('enabling at one principal offers it to that member only; a deny switch at the role wins again', async () => {
    const on = await put({ scope: { kind: 'principal', id: memberId }, enabled: true });
    expect(on.status).toBe(200);
    expect(on.json).toMatchObject({ enabled: true, changed: true, capability: { enabledAt: [{ kind: 'principal', id: memberId }] } });
    expect((await put({ scope: { kind: 'principal', id: memberId }, enabled: true })).json.changed).toBe(false);
    // An offer-switch is not a permission rule: no allow rule was stored (it would skip approvals).
    expect((await api(gw, 'GET', '/api/v1/rules', { token: op })).json.rules).toEqual([]);

    expect(await offered(member)).toContain('write_file');
    expect(await offered(other)).not.toContain('write_file');

    const off = await put({ scope: { kind: 'role', id: 'member' }, enabled: false });
    expect(off.json).toMatchObject({ enabled: false, changed: true, capability: { disabledAt: [{ kind: 'role', id: 'member' }] } });
    expect(await offered(member)).not.toContain('write_file');
    expect(await offered(owner)).toContain('write_file');

    // Disabling at the principal removes its allow-switch (and stores a deny there).
    const offHere = await put({ scope: { kind: 'principal', id: memberId }, enabled: false });
    expect(offHere.json).toMatchObject({ changed: true, capability: { enabledAt: [] } });
    const audit = await api(gw, 'GET', '/api/v1/audit?actor=operator:bootstrap-operator', { token: op });
    const entries = (audit.json.entries as { action: string; target: string; detail: Record<string, unknown> }[]).filter((e) => e.target === 'write_file');
    expect(entries.map((e) => e.action)).toEqual(expect.arrayContaining(['capability.enable', 'capability.disable']));
    expect(entries.find((e) => e.action === 'capability.enable')?.detail).toMatchObject({ scope: { kind: 'principal', id: memberId }, offerSwitch: 'stored' });
  });
});

describe('switches of a tool every role is offered', () => {
  it('enabling stores no offer-switch (nothing to offer) and only removes the deny switch at that scope', async () => {
    const read = (body: unknown) => api(gw, 'PUT', '/api/v1/capabilities/read_file', { token: op, body });
    const none = await read({ scope: { kind: 'principal', id: memberId }, enabled: true });
    expect(none.json).toMatchObject({ changed: false, capability: { offeredTo: ['owner', 'admin', 'member', 'guest'], enabledAt: [] } });
    expect((await read({ scope: { kind: 'gateway' }, enabled: false })).json).toMatchObject({
      changed: true,
      capability: { disabledAt: [{ kind: 'gateway' }] },
    });
    expect(await offered(owner)).not.toContain('read_file');
    const on = await read({ scope: { kind: 'gateway' }, enabled: true });
    expect(on.json).toMatchObject({ changed: true, capability: { enabledAt: [], disabledAt: [] } });
    expect(await offered(owner)).toContain('read_file');
  });
});

describe('capabilities.offeredTo in the config', () => {
  const start = (offeredTo: unknown) => {
    const dir = mkdtempSync(join(tmpdir(), 'swb-offer-'));
    const file = join(dir, 'bad.json5');
    writeFileSync(file, JSON.stringify({ gateway: { port: 0, dataDir: join(dir, 'data') }, capabilities: { offeredTo } }));
    return runCli(['start', '--config', file]);
  };

  it('refuses an unknown role with exit code 78, naming the key', async () => {
    const res = await start({ write_file: ['owner', 'boss'] });
    expect(res.code).toBe(78);
    expect(res.stderr).toContain('capabilities.offeredTo.write_file.1');
  });

  it('refuses a tool that is not registered, naming the key', async () => {
    const res = await start({ wirte_file: ['owner'] });
    expect(res.code).toBe(78);
    expect(res.stderr).toContain('capabilities.offeredTo.wirte_file');
    expect(res.stderr).toContain('no tool named "wirte_file"');
  });
});
