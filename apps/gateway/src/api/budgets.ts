import { type BudgetScope, ROLES } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { budgetSpecSchema } from '../config-budgets.js';
import { actorOf, auditChange } from './common.js';
import { sendError, type RouteModule } from './deps.js';

const limit = z.strictObject({ tokens: z.number().optional(), usd: z.number().optional() });
const spec = z.strictObject({ day: limit.optional(), month: limit.optional() });
const effective = z.strictObject({
  gateway: spec,
  agents: z.record(z.string(), spec),
  roles: z.record(z.string(), spec),
  principals: z.record(z.string(), spec),
});

const params = z.strictObject({
  scope: z.enum(['gateway', 'agent', 'role', 'principal']).describe('What the budget is for'),
  id: z.string().min(1).max(200).describe('The agent, role or principal id; for the gateway, any placeholder (e.g. "-")'),
});

/**
 * Budgets (scope `read` to look, `admin` to set; docs/budgets.md). `GET /budgets` answers the
 * budgets in force: the configured `budgets` with operators' overrides applied, the override
 * winning per period. `PUT /budgets/{scope}/{id}` stores an override (audited `budget.set`); a
 * body `{}` removes it (back to the configured budget).
 */
export const budgetRoutes: RouteModule = async (app, deps) => {
  const { budgets } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['usage'];

  r.get(
    '/budgets',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'The budgets in force: configured, with operator overrides applied (an override wins per period)',
        response: { 200: effective },
      },
    },
    async () => budgets.effective(),
  );

  r.put(
    '/budgets/:scope/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'Override the budget of the gateway, an agent, a role (each of its principals) or a principal; {} removes the override',
        params,
        body: budgetSpecSchema,
        response: { 200: effective },
      },
    },
    async (req, reply) => {
      const scope: BudgetScope = req.params.scope;
      const id = scope === 'gateway' ? '' : req.params.id;
      if (scope === 'agent' && !Object.hasOwn(deps.agentTools, id))
        return sendError(reply, 404, 'not_found', `id: no agent ${JSON.stringify(id)} (configured: ${Object.keys(deps.agentTools).join(', ')})`);
      if (scope === 'role' && !(ROLES as readonly string[]).includes(id))
        return sendError(reply, 400, 'bad_request', `id: no role ${JSON.stringify(id)} (roles: ${ROLES.join(', ')})`);
      if (scope === 'principal' && !(await deps.storage.principals.get(id)))
        return sendError(reply, 404, 'not_found', `id: no principal ${JSON.stringify(id)}`);
      const body = req.body;
      const next = await budgets.set(scope, id, body.day || body.month ? body : null, actorOf(req));
      await auditChange(deps.storage, req, 'budget.set', `${scope}:${id}`, { scope, id, budget: body });
      return next;
    },
  );
};
