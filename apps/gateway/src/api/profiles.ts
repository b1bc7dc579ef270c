import { parseProfile, PROFILE_FIELD_MAX, type Profile, type StoredProfile } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf, auditChange, idParam } from './common.js';
import { sendError, type RouteModule } from './deps.js';

/** The PUT body: the whole profile (fields left out are cleared); core's `parseProfile` checks the values. */
const profileBody = z.strictObject({
  name: z.string().max(PROFILE_FIELD_MAX.name).optional(),
  pronouns: z.string().max(PROFILE_FIELD_MAX.pronouns).optional(),
  timezone: z.string().max(PROFILE_FIELD_MAX.timezone).optional(),
  language: z.string().max(PROFILE_FIELD_MAX.language).optional(),
  preferences: z.string().max(PROFILE_FIELD_MAX.preferences).optional(),
});

/** A profile as the API shows it. */
function profileView(stored: StoredProfile | null): { profile: Profile; updatedBy: string | null; updatedAt: string | null } {
  return stored
    ? { profile: stored.profile, updatedBy: stored.updatedBy, updatedAt: stored.updatedAt.toISOString() }
    : { profile: {}, updatedBy: null, updatedAt: null };
}

/** A person's profile (scope `admin`: it is that person's own data; every change is audited). */
export const profileRoutes: RouteModule = async (app, { storage }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['principals'];

  r.get(
    '/principals/:id/profile',
    { config: { scope: 'admin' }, schema: { tags, summary: "A principal's profile (name, pronouns, timezone, language, preferences)", params: idParam } },
    async (req, reply) => {
      if (!(await storage.principals.get(req.params.id))) return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      return profileView(await storage.profiles.get(req.params.id));
    },
  );

  r.put(
    '/principals/:id/profile',
    {
      config: { scope: 'admin' },
      schema: { tags, summary: "Replace a principal's profile (fields left out are cleared; {} clears it)", params: idParam, body: profileBody },
    },
    async (req, reply) => {
      const parsed = parseProfile(req.body);
      if (!parsed.ok) return sendError(reply, 400, 'bad_request', parsed.message);
      if (!(await storage.principals.get(req.params.id))) return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      if (!(await storage.profiles.put(req.params.id, parsed.profile, actorOf(req))))
        return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      await auditChange(storage, req, 'profile.set', req.params.id, { fields: Object.keys(parsed.profile) });
      return profileView(await storage.profiles.get(req.params.id));
    },
  );
};
