import type { Approval, ApprovalBroker, Scope, Storage, TokenRecord } from '@switchboard/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { bearer, verifySecret } from './tokens.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operator scope a control-API route requires. */
    scope?: Scope;
  }
  interface FastifyRequest {
    operator?: TokenRecord;
  }
}

/** Sends a JSON error `{ code, message }`. */
export function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).send({ code, message });
}

async function authenticate(storage: Storage, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const secret = bearer(req.headers.authorization);
  if (!secret) {
    await sendError(reply, 401, 'unauthorized', 'An operator token is required (Authorization: Bearer <token>).');
    return;
  }
  const token = await verifySecret(storage, secret, 'operator');
  if (!token) {
    await sendError(reply, 401, 'unauthorized', 'The operator token is wrong or revoked.');
    return;
  }
  const scope = req.routeOptions.config.scope;
  if (scope && !token.scopes.includes(scope) && !token.scopes.includes('admin')) {
    await sendError(reply, 403, 'forbidden', `This route needs the "${scope}" scope.`);
    return;
  }
  req.operator = token;
}

const sessionView = (s: Awaited<ReturnType<Storage['sessions']['get']>> & object) => ({
  id: s.id,
  key: s.key,
  agentId: s.agentId,
  channel: s.channel,
  account: s.account,
  scope: s.scope,
  principalId: s.principalId,
  conversation: s.conversation,
  thread: s.thread,
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
  endedAt: s.endedAt ? s.endedAt.toISOString() : null,
});

/** The operators' control API under /api/v1: operator-token auth before body parsing, a scope per route. */
const approvalView = (a: Approval) => ({
  id: a.id,
  status: a.status,
  tool: a.tool,
  summary: a.summary,
  turnId: a.turnId,
  toolUseId: a.toolUseId,
  sessionId: a.sessionId,
  requesterPrincipalId: a.requesterPrincipalId,
  conversation: a.conversation,
  decidedBy: a.decidedBy,
  decidedAt: a.decidedAt ? a.decidedAt.toISOString() : null,
  always: a.always,
  createdAt: a.createdAt.toISOString(),
  expiresAt: a.expiresAt.toISOString(),
});

export async function controlApi(app: FastifyInstance, opts: { storage: Storage; broker: ApprovalBroker }): Promise<void> {
  const { storage, broker } = opts;
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onRequest', async (req, reply) => authenticate(storage, req, reply));
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown; code?: string }, req, reply) => {
    if (err.validation) return sendError(reply, 400, 'bad_request', err.message);
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'control API error');
    return sendError(reply, status, status === 500 ? 'internal' : (err.code ?? 'bad_request').toLowerCase(), status === 500 ? 'Internal error.' : err.message);
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, 404, 'not_found', `No route ${req.method} ${req.url.split('?')[0]}.`));
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/sessions',
    {
      config: { scope: 'read' },
      schema: {
        querystring: z.strictObject({
          principalId: z.string().max(64).optional(),
          channel: z.string().max(64).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(100),
          offset: z.coerce.number().int().min(0).default(0),
        }),
      },
    },
    async (req) => {
      const sessions = await storage.sessions.list(req.query);
      return { sessions: sessions.map(sessionView) };
    },
  );

  r.get(
    '/sessions/:id/transcript',
    { config: { scope: 'read' }, schema: { params: z.strictObject({ id: z.string().min(1).max(64) }) } },
    async (req, reply) => {
      const session = await storage.sessions.get(req.params.id);
      if (!session) return sendError(reply, 404, 'not_found', `No session ${req.params.id}.`);
      const entries = await storage.sessions.load(session.id);
      return {
        session: sessionView(session),
        entries: entries.map((e) => ({ seq: e.seq, kind: e.kind, turnId: e.turnId, payload: e.payload, createdAt: e.createdAt.toISOString() })),
      };
    },
  );

  r.get(
    '/approvals',
    {
      config: { scope: 'approvals' },
      schema: {
        querystring: z.strictObject({
          status: z.enum(['pending', 'allowed', 'denied', 'expired']).optional(),
          sessionId: z.string().max(64).optional(),
          principalId: z.string().max(64).optional(),
          limit: z.coerce.number().int().min(1).max(500).default(100),
          offset: z.coerce.number().int().min(0).default(0),
        }),
      },
    },
    async (req) => ({ approvals: (await storage.approvals.list(req.query)).map(approvalView) }),
  );

  r.post(
    '/approvals/:id/decision',
    {
      config: { scope: 'approvals' },
      schema: {
        params: z.strictObject({ id: z.string().min(1).max(64) }),
        body: z.strictObject({ decision: z.enum(['allow', 'deny']), always: z.boolean().default(false), reason: z.string().max(500).optional() }),
      },
    },
    async (req, reply) => {
      const op = req.operator!;
      const r = await broker.decide(req.params.id, req.body.decision, req.body.always, { kind: 'operator', tokenName: op.name, scopes: op.scopes }, req.body.reason);
      if (r.outcome === 'not_found') return sendError(reply, 404, 'not_found', `No approval ${req.params.id}.`);
      if (r.outcome === 'forbidden') return sendError(reply, 403, 'forbidden', r.reason);
      if (r.outcome === 'already_decided') {
        return reply.code(409).send({ code: 'already_decided', message: `This approval was already decided (${r.approval.status}).`, approval: approvalView(r.approval) });
      }
      return { approval: approvalView(r.approval) };
    },
  );
}
