import { beforeAll, describe, expect, it } from 'vitest';
import { api, type RecordedRequest } from '@switchboard/testkit';
import { linkedPrincipal, workspaceFiles } from './principal-helpers.js';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

const FILE_READERS = ['read_file', 'list_files', 'search_files'];

// The owner would run in bypassPermissions everywhere (agent mode, owner ceiling); each scope
// below lowers it: a room's `mode` and `denyTools`, an account's `permissionMode`, an operator's
// override of a room, a principal's mode set through the control API.
const env = useWebhookGateway(
  {
    main: {
      dmPolicy: 'allowlist',
      groups: {
        'room-plan': { requireMention: false, mode: 'plan', denyTools: [...FILE_READERS, 'edit_file'] },
        'room-free': { requireMention: false },
        'room-rules': { requireMention: false, denyTools: ['write_file(locked/**)'] },
      },
    },
    ro: { dmPolicy: 'allowlist', permissionMode: 'plan' },
  },
  { agents: { default: { mode: 'bypassPermissions' } } },
);

let ownerId: string;
const token = () => env.gw.credentials().operatorToken;

beforeAll(async () => {
  ownerId = await linkedPrincipal(env.gw, 'olivia', 'owner');
});

type Block = { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean };
const resultOf = (req: RecordedRequest, id: string) =>
  (req.body.messages ?? [])
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as Block[]) : []))
    .find((b) => b.type === 'tool_result' && b.tool_use_id === id);

/**
 * Sends `text` from the owner and answers its first model call with `toolUse`; returns the
 * first request (the tools offered) and the tool_result the model got back.
 */
async function ownerCalls(
  account: 'main' | 'ro',
  conversation: { id: string; kind: 'dm' | 'room' },
  toolUse: { name: string; input: Record<string, unknown> },
): Promise<{ first: RecordedRequest; result: Block }> {
  const { fake, gw } = env;
  const platform = env.platforms[account]!;
  const id = `m-${Math.random().toString(36).slice(2)}`;
  const useId = `toolu_${id.replace(/-/g, '_')}`;
  const start = fake.requests.length;
  fake.enqueue({ toolUses: [{ ...toolUse, id: useId }] }, { text: 'done' });
  const sent = await platform.send(gw, { id, sender: { id: 'olivia' }, conversation, text: `please use ${toolUse.name}` });
  expect(sent.json.gate).toBe('admitted');
  await platform.waitFor(replyTo(id));
  const first = fake.requests[start]!;
  const result = resultOf(fake.requests.at(-1)!, useId);
  expect(result).toBeDefined();
  return { first, result: result! };
}

const toolNames = (req: RecordedRequest) => (req.body.tools ?? []).map((t) => t.name);

describe('permission modes and denied tools at every scope', () => {
  it("a room's denyTools are never offered, and a denied tool the model calls anyway is refused", async () => {
    const { first, result } = await ownerCalls('main', { id: 'room-plan', kind: 'room' }, { name: 'read_file', input: { path: 'notes.txt' } });
    for (const name of [...FILE_READERS, 'edit_file']) expect(toolNames(first)).not.toContain(name);
    // Refused before it could run (the loop knows only the offered tools; the room's deny rule backs it).
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toMatch(/no tool named "read_file"|denied by rule/i);
    expect(String(result.content)).not.toMatch(/ENOENT|not found|does not exist/i);
  });

  it("a room's denyTools entry with content is a deny rule at the room's scope: the tool stays offered, matching calls are refused", async () => {
    const { first, result } = await ownerCalls(
      'main',
      { id: 'room-rules', kind: 'room' },
      { name: 'write_file', input: { path: 'locked/a.txt', content: 'x' } },
    );
    expect(toolNames(first)).toContain('write_file');
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toMatch(/denied by rule/i);
    expect(workspaceFiles(env.gw, 'a.txt')).toEqual([]);
    const other = await ownerCalls('main', { id: 'room-rules', kind: 'room' }, { name: 'write_file', input: { path: 'open.txt', content: 'x' } });
    expect(other.result.is_error).toBeFalsy();
  });

  it("a room's mode plan refuses a write the owner's bypassPermissions would have run", async () => {
    const { result } = await ownerCalls('main', { id: 'room-plan', kind: 'room' }, { name: 'write_file', input: { path: 'room-plan.txt', content: 'x' } });
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toMatch(/plan mode/);
    expect(workspaceFiles(env.gw, 'room-plan.txt')).toEqual([]);
  });

  it("an account's permissionMode plan lowers every conversation on it", async () => {
    const { first, result } = await ownerCalls('ro', { id: 'dm-olivia', kind: 'dm' }, { name: 'write_file', input: { path: 'ro.txt', content: 'x' } });
    expect(toolNames(first)).toContain('read_file');
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toMatch(/plan mode/);
    expect(workspaceFiles(env.gw, 'ro.txt')).toEqual([]);
  });

  it('without any narrower setting the owner runs in the broader mode (the control case)', async () => {
    const { result } = await ownerCalls('main', { id: 'room-free', kind: 'room' }, { name: 'write_file', input: { path: 'free.txt', content: 'x' } });
    expect(result.is_error).toBeFalsy();
    expect(workspaceFiles(env.gw, 'free.txt')).toHaveLength(1);
  });

  it("an operator's override of a room's mode and denyTools (control API) takes effect on the next message", async () => {
    const { gw } = env;
    const view = await api(gw, 'GET', '/api/v1/channels/webhook:main/policy', { token: token() });
    const groups = {
      ...(view.json.effective.groups as Record<string, unknown>),
      'room-free': { requireMention: false, mode: 'dontAsk', denyTools: ['list_files'] },
    };
    const put = await api(gw, 'PUT', '/api/v1/channels/webhook:main/policy', { token: token(), body: { groups } });
    expect(put.status).toBe(200);
    const { first, result } = await ownerCalls('main', { id: 'room-free', kind: 'room' }, { name: 'write_file', input: { path: 'free-2.txt', content: 'x' } });
    expect(toolNames(first)).not.toContain('list_files');
    expect(toolNames(first)).toContain('read_file');
    expect(result.is_error).toBe(true);
    expect(String(result.content)).toMatch(/dontAsk mode/);
    expect(workspaceFiles(gw, 'free-2.txt')).toEqual([]);
    expect((await api(gw, 'DELETE', '/api/v1/channels/webhook:main/policy/groups', { token: token() })).status).toBe(200);
  });

  it("a principal's mode set through the control API lowers that person everywhere, and clearing it restores the broader mode", async () => {
    const { gw } = env;
    const set = await api(gw, 'PUT', `/api/v1/principals/${ownerId}/mode`, { token: token(), body: { mode: 'plan' } });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ principalId: ownerId, mode: 'plan' });
    const planned = await ownerCalls('main', { id: 'room-free', kind: 'room' }, { name: 'write_file', input: { path: 'p-plan.txt', content: 'x' } });
    expect(String(planned.result.content)).toMatch(/plan mode/);
    expect(workspaceFiles(gw, 'p-plan.txt')).toEqual([]);
    // An unknown mode is refused, naming the field.
    const bad = await api(gw, 'PUT', `/api/v1/principals/${ownerId}/mode`, { token: token(), body: { mode: 'superuser' } });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/mode/);
    expect((await api(gw, 'GET', `/api/v1/principals/${ownerId}/mode`, { token: token() })).json).toEqual({ principalId: ownerId, mode: 'plan' });
    const cleared = await api(gw, 'PUT', `/api/v1/principals/${ownerId}/mode`, { token: token(), body: { mode: null } });
    expect(cleared.status).toBe(200);
    const free = await ownerCalls('main', { id: 'room-free', kind: 'room' }, { name: 'write_file', input: { path: 'p-free.txt', content: 'x' } });
    expect(free.result.is_error).toBeFalsy();
  });

  it("a session's mode set through the control API lowers that session only; unknown ids and bad bodies are refused", async () => {
    const { gw } = env;
    const sessions = await api(gw, 'GET', '/api/v1/sessions?channel=webhook', { token: token() });
    const free = (sessions.json.sessions as Array<{ id: string; conversation: string | null }>).find((x) => x.conversation === 'room-free');
    expect(free).toBeDefined();
    const set = await api(gw, 'PUT', `/api/v1/sessions/${free!.id}/mode`, { token: token(), body: { mode: 'dontAsk' } });
    expect(set.status).toBe(200);
    expect(set.json).toEqual({ sessionId: free!.id, mode: 'dontAsk' });
    const lowered = await ownerCalls('main', { id: 'room-free', kind: 'room' }, { name: 'write_file', input: { path: 's-low.txt', content: 'x' } });
    expect(String(lowered.result.content)).toMatch(/dontAsk mode/);
    // Another room of the same person keeps the broader mode.
    const other = await ownerCalls('main', { id: 'room-rules', kind: 'room' }, { name: 'write_file', input: { path: 's-other.txt', content: 'x' } });
    expect(other.result.is_error).toBeFalsy();
    expect((await api(gw, 'PUT', `/api/v1/sessions/${free!.id}/mode`, { token: token(), body: { mode: null } })).status).toBe(200);

    expect((await api(gw, 'PUT', '/api/v1/sessions/no-such-session/mode', { token: token(), body: { mode: 'plan' } })).status).toBe(404);
    expect((await api(gw, 'PUT', '/api/v1/principals/no-such-principal/mode', { token: token(), body: { mode: 'plan' } })).status).toBe(404);
    const missing = await api(gw, 'PUT', `/api/v1/principals/${ownerId}/mode`, { token: token(), body: {} });
    expect(missing.status).toBe(400);
    expect(missing.text).toMatch(/mode/);
    expect((await api(gw, 'PUT', `/api/v1/principals/${ownerId}/mode`, { token: token(), body: { mode: 'plan', extra: 1 } })).status).toBe(400);
    expect((await api(gw, 'PUT', `/api/v1/principals/${ownerId}/mode`, { body: { mode: 'plan' } })).status).toBe(401);
    const audit = await api(gw, 'GET', '/api/v1/audit?action=principal.mode', { token: token() });
    expect((audit.json.entries as Array<{ target: string; detail: { mode: string | null } }>).map((e) => e.detail.mode)).toEqual([null, 'plan']);
  });
});
