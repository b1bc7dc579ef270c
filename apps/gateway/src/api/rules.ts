import { checkRuleText, validateRuleSet, type StoredRule } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditChange, actorOf, idParam, paging, scopeProblem, scopeSchema, scopeView } from './common.js';
import { sendError, type ControlApiDeps, type RouteModule } from './deps.js';

/** The JSON shape of a stored rule. */
export const ruleView = (r: StoredRule) => ({
  id: r.id,
  scope: scopeView(r.scopeKind, r.scopeId),
  behavior: r.behavior,
  rule: r.rule,
  /** `database` for rules operators made, `approval` for "always allow" answers. */
  source: r.createdBy.startsWith('operator:') ? 'database' : 'approval',
  createdBy: r.createdBy,
  createdAt: r.createdAt.toISOString(),
});

/** Why a rule text is refused (syntax, unknown group, bad content pattern), or null. */
export function ruleProblem(deps: ControlApiDeps, text: string): string | null {
  const check = checkRuleText(text);
  if (!check.ok) return `rule: ${check.message}`;
  const expanded = deps.registry.expandRule(text);
  const problems = validateRuleSet(expanded.map((rule) => ({ scope: { kind: 'gateway' }, behavior: 'deny', rule, source: 'database' })));
  return problems[0] ? `rule: ${problems[0].message}` : null;
}

/** Stored permission rules at every scope (scope `read` to list, `admin` to change). */
export const ruleRoutes: RouteModule = async (app, deps) => {
  const { storage, policy } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['rules'];

  r.get(
    '/rules',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'List stored permission rules',
        querystring: z.strictObject({
          scopeKind: scopeSchema.shape.kind.optional(),
          scopeId: z.string().max(300).optional(),
          behavior: z.enum(['allow', 'ask', 'deny']).optional(),
          ...paging,
        }),
      },
    },
    async (req) => {
      const q = req.query;
      const all = (await storage.rules.list()).filter(
        (x) =>
          (!q.scopeKind || x.scopeKind === q.scopeKind) && (q.scopeId === undefined || x.scopeId === q.scopeId) && (!q.behavior || x.behavior === q.behavior),
      );
      return { rules: all.slice(q.offset, q.offset + q.limit).map(ruleView), total: all.length };
    },
  );

  r.post(
    '/rules',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'Store a permission rule at a scope',
        body: z.strictObject({ scope: scopeSchema, behavior: z.enum(['allow', 'ask', 'deny']), rule: z.string().min(1).max(500) }),
      },
    },
    async (req, reply) => {
      const { scope, behavior } = req.body;
      const text = req.body.rule.trim();
      const problem = ruleProblem(deps, text) ?? (await scopeProblem(deps, scope));
      if (problem) return sendError(reply, 400, 'bad_request', problem);
      const scopeId = scope.id ?? null;
      const existing = (await storage.rules.list()).find(
        (x) => x.scopeKind === scope.kind && x.scopeId === scopeId && x.behavior === behavior && x.rule === text,
      );
      if (existing) return reply.code(409).send({ code: 'duplicate_rule', message: `This rule already exists (${existing.id}).`, rule: ruleView(existing) });
      const rule = await storage.rules.create({ scopeKind: scope.kind, scopeId, behavior, rule: text, createdBy: actorOf(req) });
      await auditChange(storage, req, 'rule.create', rule.id, { scope: scopeView(rule.scopeKind, rule.scopeId), behavior, rule: text });
      await policy.ruleSaved(rule);
      return reply.code(201).send({ rule: ruleView(rule) });
    },
  );

  r.delete('/rules/:id', { config: { scope: 'admin' }, schema: { tags, summary: 'Delete a stored rule', params: idParam } }, async (req, reply) => {
    const rule = (await storage.rules.list()).find((x) => x.id === req.params.id);
    if (!rule || !(await storage.rules.delete(rule.id))) return sendError(reply, 404, 'not_found', `No rule ${req.params.id}.`);
    policy.invalidateRules();
    await auditChange(storage, req, 'rule.delete', rule.id, { scope: scopeView(rule.scopeKind, rule.scopeId), behavior: rule.behavior, rule: rule.rule });
    return { deleted: ruleView(rule) };
  });
};
