import { coversEveryRole, skillOfCapability, skillSwitchRule, type Capability, type OfferSwitch, type StoredRule } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf, auditChange, scopeProblem, scopeSchema, scopeView } from './common.js';
import { sendError, type RouteModule } from './deps.js';

const capabilityParam = z.strictObject({ id: z.string().regex(/^[A-Za-z0-9_:.-]{1,128}$/, 'a capability id such as write_file or telegram:main') });

/** A switch rule: a content-less deny of exactly this tool, stored by an operator. */
const isSwitch = (r: StoredRule, rule: string) => r.behavior === 'deny' && r.rule === rule && r.createdBy.startsWith('operator:');

/** The rule that switches a capability off: the tool's name, or `skill(<name>)` for a skill. */
const switchRuleOf = (c: Capability) => (c.kind === 'skill' ? skillSwitchRule(skillOfCapability(c.id) ?? '') : c.id);

/**
 * The capability registry (scope `read` to list, `admin` to switch). A skill (`skill:<name>`) is
 * switched by the rule `skill(<name>)`, which hides it from the listing and refuses loading it. Disabling a tool at a scope
 * removes the operator's offer-switch there and stores a content-less deny rule (so the tool is
 * never offered to the model within that scope); enabling removes such operator rules at exactly
 * that scope and, when the tool's `offeredTo` leaves a role out, stores an offer-switch there
 * (never an allow rule: that would skip approvals). Config rules are not touched; deny still wins.
 */
export const capabilityRoutes: RouteModule = async (app, deps) => {
  const { storage, registry, policy } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['capabilities'];
  const disabledAt = (c: Capability, rules: readonly StoredRule[]) =>
    rules.filter((x) => isSwitch(x, switchRuleOf(c))).map((x) => ({ ...scopeView(x.scopeKind, x.scopeId), ruleId: x.id }));
  const view = (c: Capability, rules: readonly StoredRule[], offers: readonly OfferSwitch[]) =>
    c.kind === 'tool'
      ? {
          ...c,
          enabledAt: offers.filter((o) => o.tool === c.id).map((o) => ({ ...scopeView(o.scopeKind, o.scopeId), createdBy: o.createdBy })),
          disabledAt: disabledAt(c, rules),
        }
      : c.kind === 'skill'
        ? { ...c, disabledAt: disabledAt(c, rules) }
        : c;
  const current = async () => ({ rules: await storage.rules.list(), offers: await storage.offerSwitches.list() });

  r.get(
    '/capabilities',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'Every tool, channel, model provider, hook and skill, with tool groups and profiles',
        querystring: z.strictObject({ kind: z.enum(['tool', 'channel', 'model', 'hook', 'skill']).optional() }),
      },
    },
    async (req) => {
      const { rules, offers } = await current();
      const caps = registry.list().filter((c) => !req.query.kind || c.kind === req.query.kind);
      return {
        capabilities: caps.map((c) => view(c, rules, offers)),
        groups: registry.groupTable(),
        profiles: registry.profileTable(),
        agents: deps.agentTools,
      };
    },
  );

  r.get('/capabilities/:id', { config: { scope: 'read' }, schema: { tags, summary: 'One capability', params: capabilityParam } }, async (req, reply) => {
    const c = registry.get(req.params.id);
    if (!c) return sendError(reply, 404, 'not_found', `No capability ${req.params.id}.`);
    const { rules, offers } = await current();
    return { capability: view(c, rules, offers) };
  });

  r.put(
    '/capabilities/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'Enable or disable a tool or a skill at a scope',
        params: capabilityParam,
        body: z.strictObject({ scope: scopeSchema, enabled: z.boolean() }),
      },
    },
    async (req, reply) => {
      const c = registry.get(req.params.id);
      if (!c) return sendError(reply, 404, 'not_found', `No capability ${req.params.id}.`);
      if (c.kind !== 'tool' && c.kind !== 'skill')
        return sendError(reply, 400, 'not_switchable', `${c.id} is a ${c.kind}: only tools and skills are switched here (channels have their own policy).`);
      const { scope, enabled } = req.body;
      const problem = await scopeProblem(deps, scope);
      if (problem) return sendError(reply, 400, 'bad_request', problem);
      const scopeId = scope.id ?? null;
      const rule = switchRuleOf(c);
      const here = (await storage.rules.list()).filter((x) => isSwitch(x, rule) && x.scopeKind === scope.kind && x.scopeId === scopeId);
      let rulesChanged = false;
      let offerSwitch: 'stored' | 'removed' | null = null;
      if (enabled) {
        for (const rule of here) rulesChanged = (await storage.rules.delete(rule.id)) || rulesChanged;
        // Skills are offered to every role: only a tool's offeredTo can leave one out.
        const needed = c.kind === 'tool' && !coversEveryRole(registry.offeredTo(c.id));
        if (needed && (await storage.offerSwitches.put({ tool: c.id, scopeKind: scope.kind, scopeId, createdBy: actorOf(req) }))) offerSwitch = 'stored';
      } else {
        if (c.kind === 'tool' && (await storage.offerSwitches.remove(c.id, scope.kind, scopeId))) offerSwitch = 'removed';
        if (here.length === 0) {
          await storage.rules.create({ scopeKind: scope.kind, scopeId, behavior: 'deny', rule, createdBy: actorOf(req) });
          rulesChanged = true;
        }
      }
      const changed = rulesChanged || offerSwitch !== null;
      if (changed) {
        policy.invalidateRules();
        await auditChange(storage, req, enabled ? 'capability.enable' : 'capability.disable', c.id, { scope: scopeView(scope.kind, scopeId), offerSwitch });
      }
      const { rules, offers } = await current();
      return { id: c.id, scope: scopeView(scope.kind, scopeId), enabled, changed, capability: view(c, rules, offers) };
    },
  );
};
