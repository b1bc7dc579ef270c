import { describe, expect, it } from 'vitest';
import type { ChannelPeople } from '../../src/channel.js';
import { parseProfile, profileValueProblem } from '../../src/instructions/profile.js';
import { profileReply, runProfileCommand } from '../../src/instructions/profile-command.js';
import type { Profile, StoredProfile } from '../../src/storage.js';

describe('parseProfile', () => {
  it('accepts the known string fields, trims them and drops empty ones', () => {
    expect(parseProfile({ name: ' Ada ', timezone: 'Europe/Berlin', language: '' })).toEqual({ ok: true, profile: { name: 'Ada', timezone: 'Europe/Berlin' } });
  });

  it('refuses unknown fields, non-strings, unknown zones, control characters, multi-line short fields and overlong values', () => {
    expect(parseProfile({ nick: 'x' })).toMatchObject({ ok: false, message: expect.stringContaining('unknown profile field "nick"') });
    expect(parseProfile(JSON.parse('{"__proto__": {"x": 1}}'))).toMatchObject({ ok: false });
    expect(parseProfile({ name: 5 })).toMatchObject({ ok: false, message: 'name must be a string' });
    expect(parseProfile({ timezone: 'Mars/Olympus' })).toMatchObject({ ok: false, message: expect.stringContaining('IANA time zone') });
    expect(parseProfile({ name: 'a\u0007b' })).toMatchObject({ ok: false });
    expect(parseProfile({ name: 'a\nb' })).toMatchObject({ ok: false, message: 'name is one line' });
    expect(parseProfile({ preferences: 'a\nb' })).toEqual({ ok: true, profile: { preferences: 'a\nb' } });
    expect(parseProfile({ preferences: 'x'.repeat(2001) })).toMatchObject({ ok: false });
    expect(profileValueProblem('pronouns', 'x'.repeat(51))).toContain('at most 50');
  });

  it('never throws on hostile shapes', () => {
    const hostile: unknown[] = [
      undefined,
      null,
      0,
      -1,
      Number.NaN,
      true,
      'x'.repeat(100_000),
      [],
      [1],
      {},
      JSON.parse('{"__proto__": {"name": "x"}}'),
      Object.create(null),
      () => 1,
    ];
    for (const value of hostile) {
      expect(() => parseProfile(value)).not.toThrow();
      expect(() => parseProfile({ name: value })).not.toThrow();
    }
    expect(parseProfile(null)).toMatchObject({ ok: false });
    expect(parseProfile([])).toMatchObject({ ok: false });
  });
});

describe('/profile', () => {
  const peopleWith = (initial: Profile = {}) => {
    const rows = new Map<string, StoredProfile>([['p1', { profile: initial, updatedBy: 'x', updatedAt: new Date() }]]);
    const people = {
      profiles: {
        get: async (id: string) => rows.get(id) ?? null,
        put: async (id: string, profile: Profile, by: string) => {
          if (id !== 'p1') return false;
          rows.set(id, { profile, updatedBy: by, updatedAt: new Date() });
          return true;
        },
      },
    } as unknown as ChannelPeople;
    return { people, rows };
  };

  it('shows, sets and clears the sender’s own fields', async () => {
    const { people, rows } = peopleWith({ name: 'Ada' });
    expect(await runProfileCommand(people, 'p1', '')).toEqual({ command: 'profile', outcome: 'profile', profile: { name: 'Ada' } });
    const set = await runProfileCommand(people, 'p1', 'Preferences  short answers, no emoji ');
    expect(set).toEqual({ command: 'profile', outcome: 'profile', profile: { name: 'Ada', preferences: 'short answers, no emoji' }, changed: 'preferences' });
    expect(rows.get('p1')?.updatedBy).toBe('principal:p1');
    expect(profileReply(set)).toBe('Profile updated (preferences).\nname: Ada\npreferences: short answers, no emoji');
    expect(await runProfileCommand(people, 'p1', 'clear name')).toMatchObject({
      outcome: 'profile',
      profile: { preferences: 'short answers, no emoji' },
      changed: 'name',
    });
  });

  it('refuses unknown fields, missing values and bad zones without changing anything; answers unavailable without profiles', async () => {
    const { people, rows } = peopleWith({ name: 'Ada' });
    expect(await runProfileCommand(people, 'p1', '__proto__ x')).toMatchObject({ outcome: 'profile_refused' });
    expect(await runProfileCommand(people, 'p1', 'name')).toMatchObject({ outcome: 'profile_refused' });
    expect(await runProfileCommand(people, 'p1', 'timezone Mars/Olympus')).toMatchObject({ outcome: 'profile_refused' });
    expect(rows.get('p1')?.profile).toEqual({ name: 'Ada' });
    const none = await runProfileCommand({} as ChannelPeople, 'p1', '');
    expect(none).toEqual({ command: 'profile', outcome: 'profile_unavailable' });
    expect(profileReply(none)).toBe('Profiles are not available here.');
  });
});
