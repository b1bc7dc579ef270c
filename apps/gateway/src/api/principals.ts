import { isDemotion } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf, idParam, nameSchema, paging, roleSchema } from './common.js';
import { sendError, type RouteModule } from './deps.js';
import { identityView, principalService, principalView, type Outcome } from './principal-service.js';

const identityBody = z.strictObject({
  channelType: z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'a channel type such as telegram, slack or ws'),
  externalId: z.string().regex(/^\S{1,200}$/, '1–200 characters without spaces'),
});

/** Principals and their identities (scope `read` to list, `admin` to change). */
export const principalRoutes: RouteModule = async (app, { storage, access, personalData }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['principals'];
  const refused = <T>(reply: Parameters<typeof sendError>[0], res: Outcome<T>) => (res.ok ? null : sendError(reply, res.status, res.code, res.message));

  r.get(
    '/principals',
    { config: { scope: 'read' }, schema: { tags, summary: 'List principals', querystring: z.strictObject({ role: roleSchema.optional(), ...paging }) } },
    async (req) => {
      const all = (await storage.principals.list()).filter((p) => !req.query.role || p.role === req.query.role);
      const page = all.slice(req.query.offset, req.query.offset + req.query.limit);
      return { principals: await Promise.all(page.map((p) => principalView(storage, p))), total: all.length };
    },
  );

  r.get(
    '/principals/:id',
    { config: { scope: 'read' }, schema: { tags, summary: 'One principal, its identities and client tokens', params: idParam } },
    async (req, reply) => {
      const p = await storage.principals.get(req.params.id);
      if (!p) return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      const tokens = (await storage.tokens.list()).filter((t) => t.principalId === p.id);
      return {
        principal: await principalView(storage, p),
        tokens: tokens.map((t) => ({ id: t.id, name: t.name, createdAt: t.createdAt.toISOString(), revokedAt: t.revokedAt?.toISOString() ?? null })),
      };
    },
  );

  r.post(
    '/principals',
    { config: { scope: 'admin' }, schema: { tags, summary: 'Create a principal', body: z.strictObject({ name: nameSchema, role: roleSchema }) } },
    async (req, reply) => {
      const res = await principalService.create(storage, req.body, actorOf(req));
      if (!res.ok) return refused(reply, res);
      return reply.code(201).send({ principal: await principalView(storage, res.value) });
    },
  );

  r.patch(
    '/principals/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags,
        summary: 'Rename a principal or change its role',
        params: idParam,
        body: z
          .strictObject({ name: nameSchema.optional(), role: roleSchema.optional() })
          .refine((b) => b.name !== undefined || b.role !== undefined, 'send name and/or role'),
      },
    },
    async (req, reply) => {
      const before = await storage.principals.get(req.params.id);
      const res = await principalService.update(storage, req.params.id, req.body, actorOf(req));
      if (!res.ok) return refused(reply, res);
      if (before && isDemotion(before.role, res.value.role))
        access.emit({ type: 'principal_demoted', principalId: res.value.id, from: before.role, to: res.value.role });
      return { principal: await principalView(storage, res.value) };
    },
  );

  r.delete(
    '/principals/:id',
    {
      config: { scope: 'admin' },
      schema: { tags, summary: 'Delete a principal (identities unlinked, tokens revoked; memories and workspace erased)', params: idParam },
    },
    async (req, reply) => {
      const res = await principalService.remove(storage, req.params.id, actorOf(req), personalData);
      if (!res.ok) return refused(reply, res);
      access.emit({ type: 'principal_removed', principalId: req.params.id });
      return { deleted: req.params.id, unlinkedIdentities: res.value.identities, revokedTokens: res.value.tokens, erased: res.value.erased };
    },
  );

  r.get(
    '/principals/:id/identities',
    { config: { scope: 'read' }, schema: { tags, summary: "A principal's identities", params: idParam } },
    async (req, reply) => {
      if (!(await storage.principals.get(req.params.id))) return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      return { identities: (await storage.principals.identities(req.params.id)).map(identityView) };
    },
  );

  r.post(
    '/principals/:id/identities',
    { config: { scope: 'admin' }, schema: { tags, summary: 'Link an identity (409 when another principal has it)', params: idParam, body: identityBody } },
    async (req, reply) => {
      const res = await principalService.link(storage, req.params.id, req.body.channelType, req.body.externalId, actorOf(req));
      if (!res.ok) return refused(reply, res);
      return reply.code(res.value.created ? 201 : 200).send({ identity: identityView(res.value.identity), created: res.value.created });
    },
  );

  r.delete(
    '/principals/:id/identities',
    { config: { scope: 'admin' }, schema: { tags, summary: 'Unlink an identity given in the body', params: idParam, body: identityBody } },
    async (req, reply) => {
      const res = await principalService.unlink(storage, req.params.id, req.body.channelType, req.body.externalId, actorOf(req));
      if (!res.ok) return refused(reply, res);
      return { unlinked: `${req.body.channelType}:${req.body.externalId}` };
    },
  );

  r.delete(
    '/principals/:id/identities/:identityId',
    {
      config: { scope: 'admin' },
      schema: { tags, summary: 'Unlink an identity by its id', params: idParam.extend({ identityId: z.string().min(1).max(64) }) },
    },
    async (req, reply) => {
      const identity = (await storage.principals.identities(req.params.id)).find((i) => i.id === req.params.identityId);
      if (!identity) return sendError(reply, 404, 'not_found', `No identity ${req.params.identityId} on principal ${req.params.id}.`);
      const res = await principalService.unlink(storage, req.params.id, identity.channelType, identity.externalId, actorOf(req));
      if (!res.ok) return refused(reply, res);
      return { unlinked: `${identity.channelType}:${identity.externalId}` };
    },
  );
};
