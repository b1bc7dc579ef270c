import type { ChannelPeople, ConversationRef } from '../channel.js';
import type { Profile } from '../storage.js';
import { isProfileField, PROFILE_FIELDS, profileLines, profileValueProblem } from './profile.js';

/** What `/profile` did. */
export type ProfileCommandResult =
  /** The profile as it is now (after a change, when `changed` names the field). */
  | { command: 'profile'; outcome: 'profile'; profile: Profile; changed?: string }
  /** Nothing changed: bad syntax, an unknown field or a value that is refused (the reason says which). */
  | { command: 'profile'; outcome: 'profile_refused'; reason: string }
  /** This channel's context keeps no profiles. */
  | { command: 'profile'; outcome: 'profile_unavailable' };

const USAGE = `usage: /profile (show it), /profile <field> <value> (set), /profile clear <field>; fields: ${PROFILE_FIELDS.join(', ')}`;

/**
 * `/profile [<field> <value> | clear <field>]`: shows or changes the sender's own profile (a
 * person only ever reaches their own: the principal is the resolved sender). A changed profile is
 * read into the person's next turn.
 */
export async function runProfileCommand(
  people: ChannelPeople,
  principalId: string,
  args: string,
  conversation?: ConversationRef,
): Promise<ProfileCommandResult> {
  const profiles = people.profiles;
  // A room is not the place for a person's profile (everyone there would read it).
  if (!profiles || conversation?.kind === 'room') return { command: 'profile', outcome: 'profile_unavailable' };
  const text = args.trim();
  const current = (await profiles.get(principalId))?.profile ?? {};
  if (text === '') return { command: 'profile', outcome: 'profile', profile: current };
  const [first = '', ...rest] = text.split(/\s+/);
  const clearing = first.toLowerCase() === 'clear';
  const field = (clearing ? (rest[0] ?? '') : first).toLowerCase();
  if (!isProfileField(field)) return { command: 'profile', outcome: 'profile_refused', reason: `unknown field "${field.slice(0, 40)}"; ${USAGE}` };
  const value = clearing ? '' : text.slice(first.length).trim();
  if (!clearing && value === '') return { command: 'profile', outcome: 'profile_refused', reason: USAGE };
  const problem = profileValueProblem(field, value);
  if (problem) return { command: 'profile', outcome: 'profile_refused', reason: problem };
  const next: Profile = { ...current };
  if (value === '') delete next[field];
  else next[field] = value;
  if (!(await profiles.put(principalId, next, `principal:${principalId}`)))
    return { command: 'profile', outcome: 'profile_refused', reason: 'no such principal' };
  return { command: 'profile', outcome: 'profile', profile: next, changed: field };
}

/** `/profile`'s result in plain words (channels wrap it in their own markup). */
export function profileReply(r: ProfileCommandResult): string {
  if (r.outcome === 'profile_unavailable') return 'Profiles are not available here.';
  if (r.outcome === 'profile_refused') return `Profile not changed: ${r.reason}`;
  const lines = profileLines(r.profile);
  const head = r.changed ? `Profile updated (${r.changed}).` : 'Your profile:';
  return lines.length === 0 ? `${head}\n(empty) — ${USAGE}` : `${head}\n${lines.join('\n')}`;
}
