import type { FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { paging } from '../api/common.js';
import { sendError, type RouteModule } from '../api/deps.js';
import { sessionView, transcriptView } from '../api/sessions.js';
import type { MemberAuth } from './request-auth.js';

const member = (req: FastifyRequest): MemberAuth => {
  // The `member` access check set it before any handler runs.
  if (!req.member) throw new Error('a member route ran without a member');
  return req.member;
};

/**
 * A member's own data for the web chat (`/api/v1/me…`): only with a client console session, and
 * only their own — another person's session is a 404, the same as one that does not exist.
 */
export const meRoutes: RouteModule = async (app, { storage, budgets }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const config = { access: 'member' as const };

  r.get('/me', { config, schema: { tags: ['console'], summary: 'The signed-in member: principal, role and how many sessions' } }, async (req, reply) => {
    const m = member(req);
    const p = await storage.principals.get(m.principalId);
    if (!p) return sendError(reply, 404, 'not_found', 'Your principal no longer exists.');
    const sessions = await storage.sessions.list({ principalId: p.id, limit: 500 });
    return { principal: { id: p.id, name: p.name, role: p.role }, role: p.role, sessions: sessions.length };
  });

  r.get(
    '/me/sessions',
    { config, schema: { tags: ['console'], summary: "The signed-in member's own sessions", querystring: z.strictObject(paging) } },
    async (req) => ({ sessions: (await storage.sessions.list({ principalId: member(req).principalId, ...req.query })).map(sessionView) }),
  );

  r.get(
    '/me/sessions/:id/transcript',
    {
      config,
      schema: { tags: ['console'], summary: "One of the member's own sessions with its transcript", params: z.strictObject({ id: z.string().min(1).max(64) }) },
    },
    async (req, reply) => {
      const s = await storage.sessions.get(req.params.id);
      if (!s || s.principalId !== member(req).principalId) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      return transcriptView(storage, s);
    },
  );

  r.get('/me/usage', { config, schema: { tags: ['console'], summary: "The member's own spend today and this month, with their budgets" } }, async (req) => {
    const m = member(req);
    return budgets.personal(m.principalId, m.role);
  });
};
