import type { Memory, MemoryScopeRef } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { auditChange, idParam, paging } from './common.js';
import { sendError, type RouteModule } from './deps.js';
import { identityView } from './principal-service.js';

/** The JSON shape of a memory. */
const memoryView = (m: Memory) => ({
  id: m.id,
  scope: m.scope,
  principalId: m.principalId,
  agentId: m.agentId,
  text: m.text,
  tags: m.tags,
  createdBy: m.createdBy,
  createdAt: m.createdAt.toISOString(),
});

const memoryParam = idParam.extend({ memoryId: z.string().min(1).max(64) });
const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(50).default(50), offset: paging.offset });
const teamBody = z.strictObject({
  text: z.string().trim().min(1).max(2_000),
  tags: z.array(z.string().trim().min(1).max(40)).max(10).optional(),
});

/**
 * Memories through the control API: a person's private memories (reading or deleting another
 * person's memories needs `admin`, and every read is audited), each agent's team memory (`read`
 * to list, `admin` to change), and a principal's export (`admin`, audited) — what
 * `DELETE /principals/{id}` erases.
 */
export const memoryRoutes: RouteModule = async (app, deps) => {
  const { storage } = deps;
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['memories'];
  const principalScope = (id: string): MemoryScopeRef[] => [{ scope: 'private', principalId: id }];
  const teamScope = (id: string): MemoryScopeRef[] => [{ scope: 'team', agentId: id }];
  const noAgent = (id: string) => !Object.hasOwn(deps.agentTools, id);

  r.get(
    '/principals/:id/memories',
    { config: { scope: 'admin' }, schema: { tags, summary: "A person's private memories, newest first (audited)", params: idParam, querystring: listQuery } },
    async (req, reply) => {
      if (!(await storage.principals.get(req.params.id))) return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      const scopes = principalScope(req.params.id);
      const [memories, total] = await Promise.all([storage.memories.list(scopes, req.query), storage.memories.count(scopes)]);
      await auditChange(storage, req, 'memory.read', req.params.id, { count: memories.length });
      return { memories: memories.map(memoryView), total };
    },
  );

  r.delete(
    '/principals/:id/memories',
    { config: { scope: 'admin' }, schema: { tags, summary: "Delete all of a person's private memories", params: idParam } },
    async (req, reply) => {
      if (!(await storage.principals.get(req.params.id))) return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      const deleted = await storage.memories.deleteOfPrincipal(req.params.id);
      await auditChange(storage, req, 'memory.delete', req.params.id, { deleted });
      return { deleted };
    },
  );

  r.delete(
    '/principals/:id/memories/:memoryId',
    { config: { scope: 'admin' }, schema: { tags, summary: "Delete one of a person's private memories", params: memoryParam } },
    async (req, reply) => {
      const m = await storage.memories.get(req.params.memoryId);
      if (m?.scope !== 'private' || m.principalId !== req.params.id)
        return sendError(reply, 404, 'not_found', `No memory ${req.params.memoryId} of ${req.params.id}.`);
      await storage.memories.delete(m.id);
      await auditChange(storage, req, 'memory.delete', m.id, { principalId: req.params.id });
      return { deleted: m.id };
    },
  );

  r.get(
    '/agents/:id/memories',
    { config: { scope: 'read' }, schema: { tags, summary: "An agent's team memory, newest first", params: idParam, querystring: listQuery } },
    async (req, reply) => {
      if (noAgent(req.params.id)) return sendError(reply, 404, 'not_found', `No agent ${req.params.id}.`);
      const scopes = teamScope(req.params.id);
      const [memories, total] = await Promise.all([storage.memories.list(scopes, req.query), storage.memories.count(scopes)]);
      return { memories: memories.map(memoryView), total };
    },
  );

  r.post(
    '/agents/:id/memories',
    { config: { scope: 'admin' }, schema: { tags, summary: "Add to an agent's team memory", params: idParam, body: teamBody } },
    async (req, reply) => {
      if (noAgent(req.params.id)) return sendError(reply, 404, 'not_found', `No agent ${req.params.id}.`);
      const m = await storage.memories.save({
        scope: 'team',
        agentId: req.params.id,
        text: req.body.text,
        tags: [...new Set(req.body.tags ?? [])],
        createdBy: null,
      });
      await auditChange(storage, req, 'memory.save', m.id, { scope: 'team', agentId: req.params.id });
      return reply.code(201).send({ memory: memoryView(m) });
    },
  );

  r.delete(
    '/agents/:id/memories/:memoryId',
    { config: { scope: 'admin' }, schema: { tags, summary: 'Delete one team memory of an agent', params: memoryParam } },
    async (req, reply) => {
      const m = await storage.memories.get(req.params.memoryId);
      if (m?.scope !== 'team' || m.agentId !== req.params.id)
        return sendError(reply, 404, 'not_found', `No team memory ${req.params.memoryId} of agent ${req.params.id}.`);
      await storage.memories.delete(m.id);
      await auditChange(storage, req, 'memory.delete', m.id, { agentId: req.params.id });
      return { deleted: m.id };
    },
  );

  r.get(
    '/principals/:id/export',
    {
      config: { scope: 'admin' },
      schema: { tags: ['principals'], summary: 'Everything kept about a person (what deleting them erases), as JSON (audited)', params: idParam },
    },
    async (req, reply) => {
      const p = await storage.principals.get(req.params.id);
      if (!p) return sendError(reply, 404, 'not_found', `No principal ${req.params.id}.`);
      const data = await deps.personalData.export(p.id);
      await auditChange(storage, req, 'principal.export', p.id, { parts: Object.keys(data) });
      void reply.header('content-disposition', `attachment; filename="principal-${encodeURIComponent(p.id)}.json"`);
      return {
        exportedAt: new Date().toISOString(),
        principal: { id: p.id, name: p.name, role: p.role, createdAt: p.createdAt.toISOString() },
        identities: (await storage.principals.identities(p.id)).map(identityView),
        ...data,
      };
    },
  );
};
