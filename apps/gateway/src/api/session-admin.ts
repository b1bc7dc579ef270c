import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { auditChange, idParam } from './common.js';
import { sendError, type RouteModule } from './deps.js';
import { sessionView } from './sessions.js';

/**
 * Session changes (scope `write`). Reset ends the session: the next message on its key opens a
 * fresh one, and the transcript stays readable. Delete ends it and deletes its content
 * (transcript entries, delivery-ledger rows, inbox text, approval inputs); refused with 409
 * while a turn of the session is unfinished.
 */
export const sessionAdminRoutes: RouteModule = async (app, { storage, engine }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['sessions'];

  r.post(
    '/sessions/:id/reset',
    { config: { scope: 'write' }, schema: { tags, summary: 'End a session; its key starts afresh', params: idParam } },
    async (req, reply) => {
      const session = await storage.sessions.get(req.params.id);
      if (!session) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      if (session.endedAt || !(await storage.sessions.end(session.id)))
        return sendError(reply, 409, 'already_ended', `Session ${session.id} has already ended.`);
      await auditChange(storage, req, 'session.reset', session.id, { key: session.key });
      return { session: sessionView((await storage.sessions.get(session.id)) ?? session) };
    },
  );

  r.delete(
    '/sessions/:id',
    { config: { scope: 'write' }, schema: { tags, summary: 'End a session and delete its transcript', params: idParam } },
    async (req, reply) => {
      const session = await storage.sessions.get(req.params.id);
      if (!session) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      const busy = engine.isRunning(session.id) || (await storage.turns.unfinished()).some((t) => t.sessionId === session.id);
      if (busy) return sendError(reply, 409, 'session_busy', `Session ${session.id} has a turn in progress; try again when it has finished.`);
      const res = await storage.sessions.purge(session.id);
      if (!res) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      await auditChange(storage, req, 'session.delete', session.id, { key: session.key, ...res });
      return { deleted: session.id, entries: res.entries, deliveries: res.deliveries };
    },
  );
};
