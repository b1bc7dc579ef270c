import type { Session, Storage } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sendError, type RouteModule } from './deps.js';

/** The JSON shape of a session. */
export const sessionView = (s: Session) => ({
  id: s.id,
  key: s.key,
  agentId: s.agentId,
  channel: s.channel,
  account: s.account,
  scope: s.scope,
  principalId: s.principalId,
  conversation: s.conversation,
  thread: s.thread,
  settings: s.settings,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
  endedAt: s.endedAt ? s.endedAt.toISOString() : null,
});

/** Sessions and transcripts (scope `read`). */
export const sessionRoutes: RouteModule = async (app, { storage }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/sessions',
    {
      config: { scope: 'read' },
      schema: {
        querystring: z.strictObject({
          principalId: z.string().max(64).optional(),
          channel: z.string().max(64).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(100),
          offset: z.coerce.number().int().min(0).default(0),
        }),
      },
    },
    async (req) => ({ sessions: (await storage.sessions.list(req.query)).map(sessionView) }),
  );

  r.get(
    '/sessions/:id/transcript',
    { config: { scope: 'read' }, schema: { params: z.strictObject({ id: z.string().min(1).max(64) }) } },
    async (req, reply) => {
      const session = await storage.sessions.get(req.params.id);
      if (!session) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      return transcriptView(storage, session);
    },
  );
};

/** A session and its whole transcript, as the API shows them. */
export async function transcriptView(storage: Storage, session: Session) {
  const entries = await storage.sessions.load(session.id);
  return {
    session: sessionView(session),
    entries: entries.map((e) => ({ seq: e.seq, kind: e.kind, turnId: e.turnId, payload: e.payload, createdAt: e.createdAt.toISOString() })),
  };
}
