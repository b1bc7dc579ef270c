import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteModule } from './deps.js';

/** Inbound items the gateway gave up on (scope `read`), newest first. */
export const deadLetterRoutes: RouteModule = async (app, { storage }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/inbox/dead-letters',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['inbox'],
        summary: 'List dead letters: inbound items that could not be stored or processed after limits.inboxMaxAttempts attempts',
        querystring: z.strictObject({
          channel: z.string().min(1).max(200).optional().describe('A channel id, e.g. telegram:main'),
          limit: z.coerce.number().int().min(1).max(1000).default(100),
        }),
      },
    },
    async (req) => {
      const rows = await storage.deadLetters.list({ limit: req.query.limit, ...(req.query.channel ? { channel: req.query.channel } : {}) });
      return {
        total: await storage.deadLetters.count(),
        deadLetters: rows.map((d) => ({
          id: d.id,
          channel: `${d.channel}:${d.account}`,
          dedupeKey: d.dedupeKey,
          conversation: d.conversation ?? null,
          sender: d.sender ?? null,
          summary: d.summary,
          error: d.error,
          attempts: d.attempts,
          receivedAt: d.receivedAt.toISOString(),
          failedAt: d.failedAt.toISOString(),
        })),
      };
    },
  );
};
