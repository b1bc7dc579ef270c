import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChannelPeople, ChatCommands, type ConversationRef, memoryCommandText, MemoryDesk, type Principal } from '../../src/index.js';

let storage: SqliteStorage;
let alice: Principal;
let admin: Principal;
const dm: ConversationRef = { channel: 'telegram', account: 'main', id: '42', kind: 'dm' };
const room: ConversationRef = { channel: 'telegram', account: 'main', id: '-100', kind: 'room' };

beforeEach(async () => {
  storage = openSqliteStorage({ file: ':memory:' });
  alice = await storage.principals.create({ name: 'alice', role: 'member' });
  admin = await storage.principals.create({ name: 'admin', role: 'admin' });
});
afterEach(() => storage.close());

/** The chat runner over a desk bound to agent `main` (rooms are rooms); identities `telegram:<name>`. */
function commands(): ChatCommands {
  const desk = new MemoryDesk(storage);
  const people = {
    principalFor: async (identity: string) => {
      const p = await storage.principals.byName(identity.slice('telegram:'.length));
      return p ? { principalId: p.id, role: p.role } : null;
    },
    memories: {
      list: async (c: ConversationRef, p: string) => desk.list(await desk.caller(p, 'main', c.kind === 'room')),
      forget: async (c: ConversationRef, p: string, id: string) => desk.forget(await desk.caller(p, 'main', c.kind === 'room'), id),
    },
  } as unknown as ChannelPeople;
  return new ChatCommands(people);
}

const run = (name: string, args: string, who: string, conversation = dm) => commands().run({ name, args, conversation, identity: `telegram:${who}` });

describe('/memory', () => {
  it('lists the person’s memories in a DM (private and team) and only team memory in a room; /memory forget removes their own', async () => {
    const mine = await storage.memories.save({ scope: 'private', principalId: alice.id, text: 'likes green tea', tags: ['tea'], createdBy: alice.id });
    const team = await storage.memories.save({ scope: 'team', agentId: 'main', text: 'standup 9:30', tags: [], createdBy: admin.id });
    const listed = await run('memory', '', 'alice');
    expect(listed).toMatchObject({ command: 'memory', outcome: 'memories', listing: { where: 'dm', total: 2 } });
    const text = memoryCommandText(listed as Parameters<typeof memoryCommandText>[0]);
    expect(text).toContain(`${mine.id} (private,`);
    expect(text).toContain('[tea]: likes green tea');
    expect(text).toContain('/memory forget <id>');
    // In a room everyone (guests included) would read the answer: memories are listed in direct messages only.
    expect(await run('memory', '', 'alice', room)).toEqual({ command: 'memory', outcome: 'memory_unavailable' });

    // A member cannot remove team memory from chat; not in a room either for private ones.
    expect(await run('memory', `forget ${team.id}`, 'alice')).toMatchObject({ outcome: 'not_forgotten', reason: expect.stringContaining('owner or admin') });
    expect(await run('memory', `forget ${mine.id}`, 'alice', room)).toMatchObject({ outcome: 'memory_unavailable' });
    expect(await run('memory', `forget ${mine.id}`, 'admin')).toMatchObject({ outcome: 'not_forgotten' });
    expect(await run('memory', 'forget', 'alice')).toMatchObject({ outcome: 'not_forgotten', id: '' });
    expect(await run('memory', `FORGET ${mine.id}`, 'alice')).toEqual({ command: 'memory', outcome: 'forgotten', id: mine.id });
    expect(await storage.memories.get(mine.id)).toBeNull();
    expect(await run('memory', `forget ${team.id}`, 'admin')).toEqual({ command: 'memory', outcome: 'forgotten', id: team.id });
    const audit = await storage.audit.list({ action: 'memory.forget' });
    expect(audit.map((e) => [e.actor, e.target])).toEqual(
      expect.arrayContaining([
        [`principal:${alice.id}`, mine.id],
        [`principal:${admin.id}`, team.id],
      ]),
    );
    expect(memoryCommandText((await run('memory', '', 'alice')) as Parameters<typeof memoryCommandText>[0])).toContain('not saved anything');
  });

  it('answers memory_unavailable when the channel offers no memory', async () => {
    const people = { principalFor: async () => ({ principalId: alice.id, role: 'member' }) } as unknown as ChannelPeople;
    expect(await new ChatCommands(people).run({ name: 'memory', args: '', conversation: dm, identity: 'telegram:alice' })).toEqual({
      command: 'memory',
      outcome: 'memory_unavailable',
    });
  });
});
