import type { Scope, TokenRecord } from '@switchboard/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { bearer, verifySecret } from '../tokens.js';
import { approvalRoutes } from './approvals.js';
import { boundaryRoutes } from './boundary.js';
import { sendError, type ControlApiDeps, type RouteModule } from './deps.js';
import { sessionRoutes } from './sessions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The operator scope a control-API route requires. */
    scope?: Scope;
  }
  interface FastifyRequest {
    operator?: TokenRecord;
  }
}

/** Every route module of the control API; each registers its own routes. */
export const ROUTE_MODULES: readonly RouteModule[] = [sessionRoutes, approvalRoutes, boundaryRoutes];

async function authenticate(deps: ControlApiDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const secret = bearer(req.headers.authorization);
  if (!secret) {
    await sendError(reply, 401, 'unauthorized', 'An operator token is required (Authorization: Bearer <token>).');
    return;
  }
  const token = await verifySecret(deps.storage, secret, 'operator');
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

/** The operators' control API under /api/v1: operator-token auth before body parsing, a scope per route. */
export async function controlApi(app: FastifyInstance, deps: ControlApiDeps): Promise<void> {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onRequest', async (req, reply) => authenticate(deps, req, reply));
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown; code?: string }, req, reply) => {
    if (err.validation) return sendError(reply, 400, 'bad_request', err.message);
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'control API error');
    return sendError(reply, status, status === 500 ? 'internal' : (err.code ?? 'bad_request').toLowerCase(), status === 500 ? 'Internal error.' : err.message);
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, 404, 'not_found', `No route ${req.method} ${req.url.split('?')[0]}.`));
  for (const mod of ROUTE_MODULES) await mod(app, deps);
}

export { sendError } from './deps.js';
export type { ControlApiDeps } from './deps.js';
