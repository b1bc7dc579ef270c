import type { Scope, TokenRecord } from '@switchboard/core';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createToken, mintedBy } from '../tokens.js';
import { auditChange, idParam, nameSchema, paging } from './common.js';
import { sendError, type RouteModule } from './deps.js';

const scopeList = z
  .array(z.enum(['read', 'write', 'admin', 'approvals', 'pairing']))
  .min(1)
  .max(5);

/** Optional expiry: an ISO 8601 date-time in the future; the token is refused from then on. */
const expiresAt = z.iso
  .datetime({ offset: true })
  .refine((v) => Date.parse(v) > Date.now(), 'expiresAt must be in the future')
  .optional();

const createBody = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('operator'), name: nameSchema, scopes: scopeList, expiresAt }),
  z.strictObject({ kind: z.literal('client'), name: nameSchema.optional(), principalId: z.string().min(1).max(64), expiresAt }),
]);

/** The JSON shape of a token record (never the secret or its hash). */
export const tokenView = (t: TokenRecord) => ({
  id: t.id,
  kind: t.kind,
  name: t.name,
  principalId: t.principalId,
  scopes: t.scopes,
  createdAt: t.createdAt.toISOString(),
  revokedAt: t.revokedAt ? t.revokedAt.toISOString() : null,
  expiresAt: t.expiresAt ? t.expiresAt.toISOString() : null,
  lastUsedAt: t.lastUsedAt ? t.lastUsedAt.toISOString() : null,
  createdBy: t.createdBy,
});

/** Whether an operator with `caller` scopes may hand out or revoke a token with `scopes` (GHSA-4jpw: no escalation). */
const within = (caller: readonly Scope[], scopes: readonly Scope[]) => caller.includes('admin') || scopes.every((s) => caller.includes(s));

/**
 * API tokens (scope `read` to list, `write` to create and revoke). Operator tokens may carry only
 * scopes the caller has, unless the caller has `admin`; client tokens act as a person, so
 * creating or revoking one needs `admin`.
 */
export const tokenRoutes: RouteModule = async (app, { storage, access }) => {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['tokens'];

  r.get(
    '/tokens',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'List tokens (no secrets)',
        querystring: z.strictObject({
          kind: z.enum(['client', 'operator']).optional(),
          principalId: z.string().max(64).optional(),
          active: z.enum(['true', 'false']).optional(),
          ...paging,
        }),
      },
    },
    async (req) => {
      const q = req.query;
      const all = (await storage.tokens.list()).filter(
        (t) =>
          (!q.kind || t.kind === q.kind) &&
          (!q.principalId || t.principalId === q.principalId) &&
          (q.active === undefined || (t.revokedAt === null) === (q.active === 'true')),
      );
      return { tokens: all.slice(q.offset, q.offset + q.limit).map(tokenView), total: all.length };
    },
  );

  r.post(
    '/tokens',
    { config: { scope: 'write' }, schema: { tags, summary: 'Create a token; the secret is in this answer only', body: createBody } },
    async (req, reply) => {
      const op = req.operator!;
      const body = req.body;
      if (body.kind === 'operator') {
        const scopes = [...new Set(body.scopes)];
        if (!within(op.scopes, scopes)) {
          return sendError(reply, 403, 'forbidden', `A token may only carry scopes you have (${op.scopes.join(', ')}) unless you have "admin".`);
        }
        const { secret, record } = await createToken(storage, {
          kind: 'operator',
          name: body.name,
          principalId: null,
          scopes,
          createdBy: op.id,
          expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
        });
        await auditChange(storage, req, 'token.create', record.id, { kind: 'operator', name: record.name, scopes });
        return reply.code(201).send({ token: tokenView(record), secret });
      }
      if (!op.scopes.includes('admin')) return sendError(reply, 403, 'forbidden', 'Client tokens act as a person: creating one needs the "admin" scope.');
      const principal = await storage.principals.get(body.principalId);
      if (!principal) return sendError(reply, 404, 'not_found', `No principal ${body.principalId}.`);
      const { secret, record } = await createToken(storage, {
        kind: 'client',
        name: body.name ?? `${principal.name}-client`,
        principalId: principal.id,
        scopes: [],
        createdBy: op.id,
        expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
      });
      await storage.principals.linkIdentity(principal.id, 'ws', record.id);
      await auditChange(storage, req, 'token.create', record.id, { kind: 'client', name: record.name, principalId: principal.id });
      return reply.code(201).send({ token: tokenView(record), secret });
    },
  );

  r.delete(
    '/tokens/:id',
    {
      config: { scope: 'write' },
      schema: {
        tags,
        summary: 'Revoke a token (refused at once); ?cascade=true also revokes the tokens it minted',
        params: idParam,
        querystring: z.strictObject({ cascade: z.enum(['true', 'false']).default('false') }),
      },
    },
    async (req, reply) => {
      const op = req.operator!;
      const all = await storage.tokens.list();
      const token = all.find((t) => t.id === req.params.id);
      if (!token) return sendError(reply, 404, 'not_found', `No token ${req.params.id}.`);
      if (token.revokedAt) return sendError(reply, 409, 'already_revoked', `Token ${token.id} was already revoked.`);
      const targets = [token, ...(req.query.cascade === 'true' ? mintedBy(all, token.id) : [])];
      // All or nothing: every token the cascade reaches must be one this caller may revoke.
      for (const t of targets) {
        if (t.kind === 'client' && !op.scopes.includes('admin'))
          return sendError(reply, 403, 'forbidden', `Revoking client token ${t.id} needs the "admin" scope.`);
        if (t.kind === 'operator' && !within(op.scopes, t.scopes)) {
          return sendError(reply, 403, 'forbidden', `You may only revoke operator tokens whose scopes you have, unless you have "admin" (token ${t.id}).`);
        }
      }
      for (const t of targets) {
        await storage.tokens.revoke(t.id);
        // Open connections on this token are cut now, not at their next frame.
        access.emit({ type: 'token_revoked', tokenId: t.id });
        await auditChange(storage, req, 'token.revoke', t.id, { kind: t.kind, name: t.name, ...(t === token ? {} : { cascadeFrom: token.id }) });
      }
      const after = new Map((await storage.tokens.list()).map((t) => [t.id, t]));
      const view = (t: TokenRecord) => tokenView(after.get(t.id) ?? t);
      return { token: view(token), cascaded: targets.slice(1).map(view) };
    },
  );
};
