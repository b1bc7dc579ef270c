import { BOUNDARY_FIELDS, boundaryShape, refineBoundary, type PairingRequest } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sendError, type RouteModule } from './deps.js';

const channelIdParam = z.strictObject({ id: z.string().regex(/^[a-z]+:[A-Za-z0-9_-]{1,64}$/, 'expected <type>:<account>') });

/** A partial boundary policy as the API accepts it: the config's own schema, every field optional. */
const policyPatch = z
  .strictObject({
    dmPolicy: boundaryShape.dmPolicy.unwrap().optional(),
    allowFrom: boundaryShape.allowFrom.unwrap().max(10_000).optional(),
    groupPolicy: boundaryShape.groupPolicy.unwrap().optional(),
    groups: boundaryShape.groups.unwrap().optional(),
    requireMention: boundaryShape.requireMention.unwrap().optional(),
    rateLimit: boundaryShape.rateLimit.unwrap().optional(),
    pairingRole: boundaryShape.pairingRole.unwrap().optional(),
    /** The account's permission mode (channel scope); null removes it. */
    permissionMode: boundaryShape.permissionMode.unwrap().nullable().optional(),
  })
  .refine((p) => Object.keys(p).length > 0, 'send at least one field');

/** A pairing request as the API shows it; `principalId` only to a token that may read principals anyway. */
export const pairingView = (p: PairingRequest, showPrincipal: boolean) => ({
  code: p.code,
  channel: p.channel,
  account: p.account,
  identity: p.identity,
  displayName: p.displayName,
  status: p.status,
  heldMessages: p.heldCount,
  heldBytes: p.heldBytes,
  ...(showPrincipal ? { principalId: p.principalId } : {}),
  decidedBy: p.decidedBy,
  createdAt: p.createdAt.toISOString(),
  expiresAt: p.expiresAt.toISOString(),
});

const codeParam = z.strictObject({ code: z.string().regex(/^[A-HJ-NP-Z2-9]{8}$/, 'expected an 8-character pairing code') });

/** Channels (status, counters, boundary policy) and pairing (scopes `read`, `admin`, `pairing`). */
export const boundaryRoutes: RouteModule = async (app, { channels, boundary }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const byId = new Map(channels.map((c) => [c.id, c]));

  r.get('/channels', { config: { scope: 'read' } }, async () => ({
    channels: channels.map((c) => ({ id: c.id, type: c.type, account: c.account, required: c.required, health: c.health(), counters: boundary.counts(c.id) })),
  }));

  r.get('/channels/:id/policy', { config: { scope: 'read' }, schema: { params: channelIdParam } }, async (req, reply) => {
    if (!byId.has(req.params.id)) return sendError(reply, 404, 'not_found', `No channel ${req.params.id}.`);
    const fields = await boundary.policyView(req.params.id);
    if (!fields) return sendError(reply, 404, 'not_found', `Channel ${req.params.id} has no boundary policy.`);
    return { channel: req.params.id, effective: await boundary.policy(req.params.id), fields };
  });

  r.put('/channels/:id/policy', { config: { scope: 'admin' }, schema: { params: channelIdParam, body: policyPatch } }, async (req, reply) => {
    const id = req.params.id;
    const current = byId.has(id) ? await boundary.policy(id) : null;
    if (!current) return sendError(reply, 404, 'not_found', `No channel ${id}.`);
    const next = { ...current, ...req.body };
    const problems: string[] = [];
    refineBoundary(next, { addIssue: (i: { message?: string; path?: PropertyKey[] }) => problems.push(`${(i.path ?? []).join('.')}: ${i.message}`) } as never);
    if (problems.length > 0) return sendError(reply, 400, 'bad_request', problems.join('; '));
    await boundary.setPolicy(id, req.body, `operator:${req.operator!.name}`);
    return { channel: id, effective: await boundary.policy(id), fields: await boundary.policyView(id) };
  });

  r.delete(
    '/channels/:id/policy/:field',
    { config: { scope: 'admin' }, schema: { params: channelIdParam.extend({ field: z.enum(BOUNDARY_FIELDS) }) } },
    async (req, reply) => {
      if (!byId.has(req.params.id)) return sendError(reply, 404, 'not_found', `No channel ${req.params.id}.`);
      const removed = await boundary.clearPolicy(req.params.id, req.params.field, `operator:${req.operator!.name}`);
      if (!removed) return sendError(reply, 404, 'not_found', `No operator override of ${req.params.field} on ${req.params.id}.`);
      return { channel: req.params.id, fields: await boundary.policyView(req.params.id) };
    },
  );

  r.get(
    '/pairing',
    {
      config: { scope: 'pairing' },
      schema: {
        querystring: z.strictObject({
          status: z.enum(['pending', 'approved', 'rejected', 'expired']).default('pending'),
          channel: z.string().max(64).optional(),
        }),
      },
    },
    async (req) => {
      const [channel, account] = req.query.channel?.split(':') ?? [];
      const scopes = req.operator!.scopes;
      const showPrincipal = scopes.includes('admin') || scopes.includes('read');
      return {
        requests: (await boundary.list({ status: req.query.status, ...(channel ? { channel } : {}), ...(account ? { account } : {}) })).map((p) =>
          pairingView(p, showPrincipal),
        ),
      };
    },
  );

  r.post(
    '/pairing/:code/approve',
    {
      config: { scope: 'pairing' },
      schema: {
        params: codeParam,
        body: z.strictObject({ role: z.enum(['owner', 'admin', 'member', 'guest']).optional(), principalId: z.string().min(1).max(64).optional() }).default({}),
      },
    },
    async (req, reply) => {
      const res = await boundary.approve(req.params.code, { ...req.body, scopes: req.operator!.scopes }, `operator:${req.operator!.name}`);
      if (res.outcome === 'forbidden') return sendError(reply, 403, 'forbidden', res.message);
      if (res.outcome === 'not_found') return sendError(reply, 404, 'not_found', `No pairing code ${req.params.code}.`);
      if (res.outcome === 'unknown_principal') return sendError(reply, 404, 'not_found', `No principal ${req.body.principalId}.`);
      if (res.outcome === 'not_pending') return sendError(reply, 409, 'not_pending', `Pairing code ${req.params.code} is no longer pending.`);
      return res;
    },
  );

  r.post('/pairing/:code/reject', { config: { scope: 'pairing' }, schema: { params: codeParam } }, async (req, reply) => {
    const res = await boundary.reject(req.params.code, `operator:${req.operator!.name}`);
    if (res === 'not_found') return sendError(reply, 404, 'not_found', `No pairing code ${req.params.code}.`);
    if (res === 'not_pending') return sendError(reply, 409, 'not_pending', `Pairing code ${req.params.code} is no longer pending.`);
    return { outcome: res };
  });
};
