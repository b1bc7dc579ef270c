import type { Profile } from '../storage.js';
import { isTimeZone } from '../turn-stamp.js';

/** The fields of a profile, in the order the system prompt shows them. */
export const PROFILE_FIELDS = ['name', 'pronouns', 'timezone', 'language', 'preferences'] as const satisfies ReadonlyArray<keyof Profile>;

/** One profile field's name. */
export type ProfileField = (typeof PROFILE_FIELDS)[number];

/** The longest value of each field, in characters (`preferences` is free text, the others are short). */
export const PROFILE_FIELD_MAX: Readonly<Record<ProfileField, number>> = { name: 100, pronouns: 50, timezone: 64, language: 50, preferences: 2000 };

/** Whether `field` names a profile field (own-property safe: the name comes from chat or HTTP). */
export function isProfileField(field: string): field is ProfileField {
  return (PROFILE_FIELDS as readonly string[]).includes(field);
}

/** Why `value` cannot be stored in `field`, or undefined when it can. */
export function profileValueProblem(field: ProfileField, value: string): string | undefined {
  if (value.length > PROFILE_FIELD_MAX[field]) return `${field} is at most ${PROFILE_FIELD_MAX[field]} characters`;
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(value)) return `${field} must not contain control characters`;
  if (field !== 'preferences' && value.includes('\n')) return `${field} is one line`;
  if (field === 'timezone' && value !== '' && !isTimeZone(value))
    return `timezone must be an IANA time zone such as "Europe/Berlin" (got "${value.slice(0, 64)}")`;
  return undefined;
}

/**
 * A profile from outside input (control API body, stored JSON): every field must be a string that
 * passes {@link profileValueProblem}; an empty string clears the field; unknown keys are refused.
 */
export function parseProfile(input: unknown): { ok: true; profile: Profile } | { ok: false; message: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { ok: false, message: 'a profile is a JSON object' };
  const profile: Profile = {};
  for (const key of Object.keys(input)) {
    if (!isProfileField(key)) return { ok: false, message: `unknown profile field "${key.slice(0, 64)}": use ${PROFILE_FIELDS.join(', ')}` };
    const value: unknown = (input as Record<string, unknown>)[key];
    if (typeof value !== 'string') return { ok: false, message: `${key} must be a string` };
    const problem = profileValueProblem(key, value.trim());
    if (problem) return { ok: false, message: problem };
    if (value.trim() !== '') profile[key] = value.trim();
  }
  return { ok: true, profile };
}

/** The profile as `field: value` lines, in {@link PROFILE_FIELDS} order (empty when nothing is set). */
export function profileLines(profile: Profile): string[] {
  return PROFILE_FIELDS.flatMap((field) => (profile[field] ? [`${field}: ${profile[field]}`] : []));
}
