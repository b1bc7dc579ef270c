import type { UsageFilter } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteModule } from './deps.js';

const DAY_MS = 86_400_000;

const totals = z.strictObject({
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  cacheReadInputTokens: z.number().int(),
  cacheCreationInputTokens: z.number().int(),
  costUsd: z.number(),
  calls: z.number().int(),
});

const day = z.iso.date();

const query = z
  .strictObject({
    principal: z.string().min(1).max(200).optional(),
    agent: z.string().min(1).max(200).optional(),
    channel: z.string().min(1).max(200).optional(),
    model: z.string().min(1).max(200).optional(),
    from: day.optional().describe('First UTC day counted (YYYY-MM-DD), inclusive'),
    to: day.optional().describe('Last UTC day counted (YYYY-MM-DD), inclusive'),
  })
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, { message: '"to" is before "from"', path: ['to'] });

/** Model usage and cost from the per-call usage rows (scope `read`): totals and a per-UTC-day series, filtered. */
export const usageRoutes: RouteModule = async (app, { storage }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/usage',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['usage'],
        summary: 'Token use and cost of model calls: totals and one entry per UTC day, filtered by principal, agent, channel, model and days',
        querystring: query,
        response: { 200: z.strictObject({ totals, days: z.array(totals.extend({ day: z.string() })) }) },
      },
    },
    async (req) => {
      const q = req.query;
      const filter: UsageFilter = {
        ...(q.principal ? { principalId: q.principal } : {}),
        ...(q.agent ? { agentId: q.agent } : {}),
        ...(q.channel ? { channel: q.channel } : {}),
        ...(q.model ? { model: q.model } : {}),
        ...(q.from ? { from: new Date(`${q.from}T00:00:00Z`) } : {}),
        ...(q.to ? { before: new Date(Date.parse(`${q.to}T00:00:00Z`) + DAY_MS) } : {}),
      };
      return storage.usage.report(filter);
    },
  );
};
