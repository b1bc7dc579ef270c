import { describe, expect, it } from 'vitest';
import type { ChannelPeople, ConversationRef } from '../src/channel.js';
import { runProfileCommand } from '../src/instructions/profile-command.js';
import { runMemoryCommand } from '../src/memory/command.js';
import { profilePart } from '../src/personal-data.js';

const room: ConversationRef = { channel: 'telegram', account: 'main', id: '-100', kind: 'room' };
const dm: ConversationRef = { channel: 'telegram', account: 'main', id: '42', kind: 'dm' };

/** People whose profile and memories exist (a room must not show them). */
const people = {
  profiles: {
    get: async () => ({ profile: { name: 'Alice', preferences: 'private notes' }, updatedBy: 'x', updatedAt: new Date(0) }),
    put: async () => true,
  },
  memories: {
    list: async () => ({ private: [], team: [{ id: 'm1', text: 'team secret' }] }),
    forget: async () => ({ outcome: 'missing' }),
  },
} as unknown as ChannelPeople;

describe('a person’s profile and memories are never shown in a room', () => {
  it('/profile answers unavailable in a room, and shows the profile in a direct message', async () => {
    expect(await runProfileCommand(people, 'p1', '', room)).toEqual({ command: 'profile', outcome: 'profile_unavailable' });
    expect(await runProfileCommand(people, 'p1', 'name Bob', room)).toEqual({ command: 'profile', outcome: 'profile_unavailable' });
    expect(await runProfileCommand(people, 'p1', '', dm)).toMatchObject({ outcome: 'profile', profile: { name: 'Alice' } });
  });

  it('/memory answers unavailable in a room, and lists in a direct message', async () => {
    expect(await runMemoryCommand(people, room, 'p1', '')).toEqual({ command: 'memory', outcome: 'memory_unavailable' });
    expect(await runMemoryCommand(people, dm, 'p1', '')).toMatchObject({ outcome: 'memories' });
  });
});

describe('profilePart', () => {
  it('exports the profile before the deletion erases it', async () => {
    let stored: Record<string, string> | null = { name: 'Alice' };
    const part = profilePart({
      profiles: {
        get: async () => (stored ? { profile: stored, updatedBy: 'principal:p1', updatedAt: new Date(0) } : null),
        put: async (_id, profile) => {
          stored = Object.keys(profile).length === 0 ? null : (profile as Record<string, string>);
          return true;
        },
      },
    });
    expect(await part.export('p1')).toEqual({ name: 'Alice', updatedBy: 'principal:p1', updatedAt: '1970-01-01T00:00:00.000Z' });
    await part.erase('p1');
    expect(await part.export('p1')).toBeNull();
  });
});
