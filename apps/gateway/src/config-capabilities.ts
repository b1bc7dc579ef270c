import { ROLES, type Role } from '@switchboard/core';
import { z } from 'zod';

/** Keys a parsed object may hold as its own that a plain record drops or inherits: refused, never ignored. */
const HOSTILE_KEYS = ['__proto__'];

/** Tool name → the roles offered it by default; an own `__proto__` key is refused (a record would drop it silently). */
const offeredToSchema = z
  .unknown()
  .superRefine((value, ctx) => {
    if (typeof value !== 'object' || value === null) return;
    for (const key of HOSTILE_KEYS) {
      if (Object.hasOwn(value, key)) ctx.addIssue({ code: 'custom', path: [key], message: `no tool is named ${JSON.stringify(key)}` });
    }
  })
  .pipe(z.record(z.string().min(1).max(128), z.array(z.enum(ROLES as [Role, ...Role[]]))));

/**
 * `capabilities`: `offeredTo` per tool name, the roles offered it by default, over the built-in
 * defaults (`exec` → owner, admin; every other tool: every role). Operators' offer-switches
 * (control API) add scopes; deny rules still win. A name that is no registered tool is a start-up
 * error (checked by the registry).
 */
export const capabilitiesSchema = z.strictObject({ offeredTo: offeredToSchema.default({}) }).prefault({});
