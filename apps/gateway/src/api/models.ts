import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteModule } from './deps.js';

const price = z.strictObject({ input: z.number(), output: z.number(), cacheRead: z.number(), cacheWrite5m: z.number(), cacheWrite1h: z.number() });

const model = z.strictObject({
  name: z.string(),
  contextWindow: z.number().int(),
  outputReserve: z.number().int(),
  maxOutputTokens: z.number().int(),
  minCacheTokens: z.number().int(),
  price: price.describe('USD per million tokens'),
  source: z.enum(['config', 'known', 'generic']).describe('config: a models.<name> entry; known: the built-in table; generic: the default for unknown names'),
  roles: z.array(z.enum(['primary', 'fallback'])),
});

/**
 * The effective per-model values (scope `read`): `model.name`, `model.fallback` and every
 * `models.<name>` entry, after the defaults, and the `max_tokens` each call asks for.
 */
export const modelRoutes: RouteModule = async (app, { models }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/models',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['models'],
        summary: 'The effective limits and prices of the configured models',
        response: { 200: z.strictObject({ maxTokens: z.number().int(), models: z.array(model) }) },
      },
    },
    async () => ({ maxTokens: models.maxTokens, models: models.list.map((m) => ({ ...m, price: { ...m.price }, roles: [...m.roles] })) }),
  );
};
