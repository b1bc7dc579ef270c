import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteModule } from './deps.js';

/** The audit log, newest first (scope `read`): filter by action, actor and time, paginate with limit/offset. */
export const auditRoutes: RouteModule = async (app, { storage }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/audit',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['audit'],
        summary: 'Read the audit log',
        querystring: z.strictObject({
          action: z.string().min(1).max(64).optional(),
          actor: z.string().min(1).max(200).optional(),
          since: z.iso.datetime({ offset: true }).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(100),
          offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
        }),
      },
    },
    async (req) => {
      const q = req.query;
      const rows = await storage.audit.list({
        ...(q.action ? { action: q.action } : {}),
        ...(q.actor ? { actor: q.actor } : {}),
        ...(q.since ? { since: new Date(q.since) } : {}),
        limit: q.limit + 1,
        offset: q.offset,
      });
      const page = rows.slice(0, q.limit);
      return {
        entries: page.map((e) => ({ id: e.id, at: e.at.toISOString(), actor: e.actor, action: e.action, target: e.target, detail: e.detail })),
        nextOffset: rows.length > q.limit ? q.offset + q.limit : null,
      };
    },
  );
};
