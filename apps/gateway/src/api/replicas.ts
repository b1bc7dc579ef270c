import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { RouteModule } from './deps.js';

/**
 * The replicas sharing this gateway's database and what each holds (scope `read`): a replica is
 * listed while its presence lease is live; `holds` names its receiver leases
 * (`receiver:<channel>`) and session leases (`session:<id>`). On SQLite the gateway is alone.
 */
export const replicaRoutes: RouteModule = async (app, { replicas }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/replicas',
    {
      config: { scope: 'read' },
      schema: {
        tags: ['replicas'],
        summary: 'List the replicas on this database and the leases each holds (receivers, sessions); receivers nobody holds now under free',
      },
    },
    async () => replicas.view(),
  );
};
