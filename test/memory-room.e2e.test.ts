import { describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { toolResultFor } from './helpers.js';
import { linkedPrincipal } from './principal-helpers.js';
import { replyTo, useWebhookGateway } from './webhook-helpers.js';

// Issue 15 (memory): a room session, which several people share, gets the team memory only —
// never a person's private memories, even that person's own.
const env = useWebhookGateway({ main: { dmPolicy: 'pairing', groups: { 'room-1': { requireMention: false } } } });

describe('memory in a room session', () => {
  it('search sees team memory only and a private save is refused; in the DM the private memory is there', async () => {
    const { fake, gw, platform } = env;
    const alice = await linkedPrincipal(gw, 'alice', 'member');
    const { operatorToken } = gw.credentials();
    const team = await api(gw, 'POST', '/api/v1/agents/default/memories', { token: operatorToken, body: { text: 'Team tea is oolong', tags: ['tea'] } });
    expect(team.status).toBe(201);

    // In her DM alice saves a private fact.
    fake.enqueue({ toolUses: [{ name: 'memory_save', input: { text: 'Alice drinks green tea' }, id: 'toolu_dm_save' }] }, { text: 'saved' });
    await platform.send(gw, { id: 'dm-1', sender: { id: 'alice' }, conversation: { id: 'alice', kind: 'dm' }, text: 'remember my tea' });
    await platform.waitFor(replyTo('dm-1'));
    expect(toolResultFor(fake, 'toolu_dm_save').content).toMatch(/\(private\)\.$/);

    // In the room: the same person's search finds the team's memory, not hers; a private save is refused.
    fake.enqueue(
      { toolUses: [{ name: 'memory_search', input: { query: 'tea' }, id: 'toolu_room_find' }] },
      { toolUses: [{ name: 'memory_save', input: { text: 'Alice is in the room' }, id: 'toolu_room_save' }] },
      { text: 'room answered' },
    );
    await platform.send(gw, { id: 'room-1-msg', sender: { id: 'alice' }, conversation: { id: 'room-1', kind: 'room' }, text: 'what tea?' });
    await platform.waitFor(replyTo('room-1-msg'));
    const found = toolResultFor(fake, 'toolu_room_find');
    expect(found.content).toContain('Team tea is oolong');
    expect(found.content).not.toContain('green tea');
    const saved = toolResultFor(fake, 'toolu_room_save');
    expect(saved.is_error).toBe(true);
    expect(saved.content).toContain('only team memory');
    const mine = await api(gw, 'GET', `/api/v1/principals/${alice}/memories`, { token: operatorToken });
    expect(mine.json.memories.map((m: { text: string }) => m.text)).toEqual(['Alice drinks green tea']);
  });
});
