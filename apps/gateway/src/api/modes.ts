import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { permissionModeSchema, principalMode, setPrincipalMode } from '@switchboard/core';
import { actorOf, auditChange, idParam } from './common.js';
import { sendError, type RouteModule } from './deps.js';

/** `{ mode }`: a permission mode, or null to remove the scope's setting. */
const modeBody = z.strictObject({ mode: permissionModeSchema.nullable() });

/**
 * Permission modes at the principal and session scopes (scope `read` to look, `admin` to set).
 * Like every scope's mode, these only lower trust: the mode in force is the least trusted of the
 * role's ceiling and every scope's setting (gateway, agent, channel, room, principal, session).
 */
export const modeRoutes: RouteModule = async (app, { storage, policy }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['permissions'];

  r.get(
    '/principals/:id/mode',
    { config: { scope: 'read' }, schema: { tags, summary: "A principal's permission mode (null: none set)", params: idParam } },
    async (req, reply) => {
      if (!(await storage.principals.get(req.params.id))) return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      return { principalId: req.params.id, mode: (await principalMode(storage, req.params.id)) ?? null };
    },
  );

  r.put(
    '/principals/:id/mode',
    {
      config: { scope: 'admin' },
      schema: { tags, summary: "Set or clear a principal's permission mode (it may lower trust, never raise it)", params: idParam, body: modeBody },
    },
    async (req, reply) => {
      if (!(await storage.principals.get(req.params.id))) return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      await setPrincipalMode(storage, req.params.id, req.body.mode, actorOf(req));
      await auditChange(storage, req, 'principal.mode', req.params.id, { mode: req.body.mode });
      return { principalId: req.params.id, mode: req.body.mode };
    },
  );

  r.put(
    '/sessions/:id/mode',
    {
      config: { scope: 'admin' },
      schema: { tags, summary: "Set or clear a session's permission mode (it may lower trust, never raise it)", params: idParam, body: modeBody },
    },
    async (req, reply) => {
      const session = await storage.sessions.get(req.params.id);
      if (!session) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      await storage.sessions.updateSettings(session.id, { mode: req.body.mode });
      await auditChange(storage, req, 'session.mode', session.id, { mode: req.body.mode });
      // A session mode above what the broader scopes give is a session grant: stamped, audited, it lapses.
      if (req.body.mode)
        await policy.sessionModeSet(
          await policy.sessionContext({ ...session, settings: { ...session.settings, mode: req.body.mode } }),
          req.body.mode,
          actorOf(req),
        );
      return { sessionId: session.id, mode: req.body.mode };
    },
  );
};
