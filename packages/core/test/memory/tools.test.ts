import type { ToolContext } from '@switchboard/agent';
import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import fc from 'fast-check';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApprovalBroker, createMemoryTools, needsAdminApproval, type Principal, type Role } from '../../src/index.js';

let storage: SqliteStorage;
let people: Record<string, Principal>;

beforeEach(async () => {
  storage = openSqliteStorage({ file: ':memory:' });
  people = {};
  for (const [name, role] of [
    ['owner', 'owner'],
    ['admin', 'admin'],
    ['alice', 'member'],
    ['bob', 'member'],
    ['gus', 'guest'],
  ] as const) {
    people[name] = await storage.principals.create({ name, role: role as Role });
  }
});
afterEach(() => storage.close());

const ctxOf = (who: string | undefined, over: Partial<ToolContext> = {}): ToolContext => ({
  signal: new AbortController().signal,
  toolUseId: 'toolu_1',
  sessionId: 's1',
  turnId: 't1',
  agentId: 'main',
  workspace: '/nowhere',
  ...(who ? { principalId: people[who]!.id } : {}),
  ...over,
});

const tools = () => {
  const [save, search, forget] = createMemoryTools(storage);
  return { save, search, forget };
};

describe('memory tools: private scope', () => {
  it('saves to the speaker’s private memory without asking; only they find it; they can forget it', async () => {
    const { save, search, forget } = tools();
    const input = save.input.parse({ text: 'Alice’s cat is Miso', tags: ['pets', 'pets'] });
    expect(await save.checkPermissions!(input, ctxOf('alice'))).toEqual({ behavior: 'allow' });
    const saved = await save.call(input, ctxOf('alice'));
    const id = /Saved as (mem_\w+) \(private\)/.exec(saved.content)?.[1];
    expect(id).toBeDefined();
    expect((await storage.memories.get(id!))?.tags).toEqual(['pets']);

    expect((await search.call(search.input.parse({ query: 'cat' }), ctxOf('alice'))).content).toContain('Miso');
    expect((await search.call(search.input.parse({ query: 'cat Miso' }), ctxOf('bob'))).content).toBe('No memories match "cat Miso".');
    // Not visible to bob: his forget is refused as "not found", and nothing is deleted.
    expect(await forget.checkPermissions!({ id: id! }, ctxOf('bob'))).toMatchObject({ behavior: 'deny' });
    expect((await forget.call({ id: id! }, ctxOf('bob'))).isError).toBe(true);
    expect(await storage.memories.get(id!)).not.toBeNull();
    expect(await forget.checkPermissions!({ id: id! }, ctxOf('alice'))).toEqual({ behavior: 'allow' });
    expect((await forget.call({ id: id! }, ctxOf('alice'))).content).toBe(`Forgot ${id}.`);
    expect(await storage.memories.get(id!)).toBeNull();
    expect((await storage.audit.list({})).map((e) => e.action).sort()).toEqual(['memory.forget', 'memory.save']);
  });

  it('refuses a sender without a principal, and private memory in a room session (search sees team memory only)', async () => {
    const { save, search } = tools();
    const input = save.input.parse({ text: 'x' });
    expect(await save.checkPermissions!(input, ctxOf(undefined))).toMatchObject({ behavior: 'deny' });
    expect((await save.call(input, ctxOf(undefined))).isError).toBe(true);
    expect(await save.checkPermissions!(input, ctxOf('alice', { roomSession: true }))).toMatchObject({
      behavior: 'deny',
      reason: expect.stringContaining('room'),
    });
    expect((await save.call(input, ctxOf('alice', { roomSession: true }))).isError).toBe(true);
    await storage.memories.save({ scope: 'private', principalId: people.alice!.id, text: 'private tea note', tags: [], createdBy: null });
    await storage.memories.save({ scope: 'team', agentId: 'main', text: 'team tea note', tags: [], createdBy: null });
    const inRoom = await search.call(search.input.parse({ query: 'tea' }), ctxOf('alice', { roomSession: true }));
    expect(inRoom.content).toContain('team tea note');
    expect(inRoom.content).not.toContain('private tea note');
    expect(await storage.memories.count([])).toBe(0);
  });

  it('never fails on any query text', async () => {
    const { search } = tools();
    await storage.memories.save({ scope: 'private', principalId: people.alice!.id, text: 'a note', tags: [], createdBy: null });
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }), async (query) => {
        const r = await search.call({ query }, ctxOf('alice'));
        expect(r.isError).toBeFalsy();
      }),
      { numRuns: 200 },
    );
  });
});

describe('memory tools: team scope', () => {
  it('admins write directly; members are asked (source safety) and the call runs only with a stored approval; guests are refused', async () => {
    const { save, search } = tools();
    const input = save.input.parse({ text: 'standup at 9:30', scope: 'team' });
    expect(await save.checkPermissions!(input, ctxOf('admin'))).toEqual({ behavior: 'allow' });
    expect((await save.call(input, ctxOf('admin'))).content).toMatch(/\(team\)\.$/);
    expect(await save.checkPermissions!(input, ctxOf('alice'))).toMatchObject({ behavior: 'ask', source: 'safety' });
    expect(await save.checkPermissions!(input, ctxOf('gus'))).toMatchObject({ behavior: 'deny' });
    // bypassPermissions skips a tool's own ask: the call itself still refuses without an approval.
    const refused = await save.call(input, ctxOf('alice', { toolUseId: 'toolu_2' }));
    expect(refused.isError).toBe(true);
    expect(await storage.memories.count([{ scope: 'team', agentId: 'main' }])).toBe(1);

    const { approval } = await storage.approvals.create({
      turnId: 't1',
      toolUseId: 'toolu_3',
      sessionId: 's1',
      tool: 'memory_save',
      summary: 'memory_save',
      input,
      requesterPrincipalId: people.alice!.id,
      conversation: { channel: 'websocket', account: 'default', id: 'c', kind: 'dm' },
      expiresAt: new Date(Date.now() + 60_000),
      source: 'safety',
      alwaysRule: null,
    });
    await storage.approvals.claim(approval.id, 'allowed', `principal:${people.admin!.id}`);
    expect((await save.call(input, ctxOf('alice', { toolUseId: 'toolu_3' }))).isError).toBeFalsy();
    expect(await storage.memories.count([{ scope: 'team', agentId: 'main' }])).toBe(2);
    // Members read team memory; guests do not, and another agent's team memory is not this one's.
    expect((await search.call({ query: 'standup' }, ctxOf('bob'))).content).toContain('(team,');
    expect((await search.call({ query: 'standup' }, ctxOf('gus'))).content).toBe('No memories match "standup".');
    expect((await search.call({ query: 'standup' }, ctxOf('bob', { agentId: 'other' }))).content).toBe('No memories match "standup".');
  });

  it('approvals of team writes are not the requester’s to answer, even where members may self-approve', async () => {
    expect(needsAdminApproval({ tool: 'memory_save', input: { text: 'x', scope: 'team' } })).toBe(true);
    expect(needsAdminApproval({ tool: 'memory_save', input: { text: 'x' } })).toBe(false);
    expect(needsAdminApproval({ tool: 'memory_forget', input: { id: 'mem_1' } })).toBe(true);
    expect(needsAdminApproval({ tool: 'write_file', input: { scope: 'team' } })).toBe(false);
    const broker = new ApprovalBroker({ storage, log: pino({ level: 'silent' }), timeoutMs: 60_000, selfApproveRoles: ['owner', 'admin', 'member'] });
    const base = {
      turnId: 't1',
      toolUseId: 'toolu_9',
      sessionId: 's1',
      tool: 'memory_save',
      summary: 'memory_save',
      requesterPrincipalId: people.alice!.id,
      conversation: { channel: 'websocket', account: 'default', id: 'c', kind: 'dm' as const },
      expiresAt: new Date(Date.now() + 60_000),
      source: 'safety' as const,
      alwaysRule: null,
    };
    const { approval: team } = await storage.approvals.create({ ...base, input: { text: 'x', scope: 'team' } });
    const self = { kind: 'principal' as const, principalId: people.alice!.id, role: 'member' as const };
    expect(broker.mayDecide(team, self)).toMatchObject({ ok: false });
    expect(broker.mayDecide(team, { kind: 'principal', principalId: people.admin!.id, role: 'admin' })).toEqual({ ok: true });
    const { approval: own } = await storage.approvals.create({ ...base, toolUseId: 'toolu_10', input: { text: 'x' } });
    expect(broker.mayDecide(own, self)).toEqual({ ok: true });
    broker.close();
  });
});
