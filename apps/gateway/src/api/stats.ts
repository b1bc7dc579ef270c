import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteModule } from './deps.js';

/** Process statistics for operators and the benchmark (scope `read`). */
export const statsRoutes: RouteModule = async (app, { engine, storage }) => {
  const RESOLUTION_MS = 10;
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  app.addHook('onClose', async () => delay.disable());
  // The histogram records each sampling timer's interval, so the sampling period itself is
  // subtracted: what is left is how late the loop was.
  const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/stats',
    {
      config: { scope: 'read' },
      schema: { querystring: z.strictObject({ reset: z.enum(['true', 'false']).default('false') }) },
    },
    async (req) => {
      const mem = process.memoryUsage();
      const body = {
        uptimeSec: Math.round(process.uptime()),
        activeTurns: engine.active,
        memory: { rssMB: Math.round(mem.rss / 1048576), heapUsedMB: Math.round(mem.heapUsed / 1048576) },
        // Since the last reset (or start): how late timers and I/O callbacks ran.
        eventLoopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max), samples: delay.count },
      };
      if (req.query.reset === 'true') delay.reset();
      return body;
    },
  );

  r.get(
    '/stats/turns',
    {
      config: { scope: 'read' },
      schema: {
        summary: 'Turns created since a moment (default: 00:00 UTC today): count per state and summed token use',
        querystring: z.strictObject({ since: z.iso.datetime({ offset: true }).optional() }),
      },
    },
    async (req) => {
      const now = new Date();
      const since = req.query.since ? new Date(req.query.since) : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
      const s = await storage.turns.summary(since);
      return { since: since.toISOString(), activeTurns: engine.active, turns: s.byState, usage: s.usage };
    },
  );
};
