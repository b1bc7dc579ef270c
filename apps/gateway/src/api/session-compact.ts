import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditChange, idParam } from './common.js';
import { sendError, type RouteModule } from './deps.js';

const compactBody = z.strictObject({ instructions: z.string().max(2_000).optional() }).optional();

/**
 * `POST /sessions/:id/compact` (scope `write`): summarizes the session's history before its last
 * turns into a `manual` compact boundary now (docs/context.md, "Compaction"). Refused with 409
 * while a turn of the session runs or waits (`session_busy`: try again when it has finished — it
 * is not queued), for an ended session and when there is too little history; 502 when the summary
 * call failed (nothing changed). Audited as `session.compact`. The summary call's usage row is
 * counted to the session's agent and channel, with no principal.
 */
export const sessionCompactRoutes: RouteModule = async (app, { storage, engine }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/sessions/:id/compact',
    {
      config: { scope: 'write' },
      schema: { tags: ['sessions'], summary: 'Compact a session now: its history before the last turns becomes a summary', params: idParam, body: compactBody },
    },
    async (req, reply) => {
      const session = await storage.sessions.get(req.params.id);
      if (!session) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      if (session.endedAt) return sendError(reply, 409, 'already_ended', `Session ${session.id} has ended.`);
      const instructions = req.body?.instructions?.trim();
      const res = await engine.compact(session, { principalId: null, ...(instructions ? { instructions } : {}) });
      switch (res.outcome) {
        case 'busy':
          return sendError(reply, 409, 'session_busy', `Session ${session.id} has a turn in progress; try again when it has finished.`);
        case 'nothing':
          return sendError(reply, 409, 'nothing_to_compact', `Session ${session.id} has too little history to compact.`);
        case 'failed':
          return sendError(reply, 502, 'compaction_failed', `The summary call failed; nothing changed (${res.error}).`);
        case 'compacted': {
          const compacted = { throughSeq: res.throughSeq, tokensBefore: res.tokensBefore, tokensAfter: res.tokensAfter };
          await auditChange(storage, req, 'session.compact', session.id, { trigger: 'manual', ...compacted, ...(instructions ? { instructions } : {}) });
          return { sessionId: session.id, compacted };
        }
      }
    },
  );
};
