import { isSwbError, type Scope, SwbErrorCode, type TokenRecord } from '@switchboard/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { authRoutes } from '../console/auth-routes.js';
import { eventsRoute } from '../console/events-route.js';
import { meRoutes } from '../console/me-routes.js';
import { authenticateRequest } from '../console/request-auth.js';
import { approvalRoutes } from './approvals.js';
import { auditRoutes } from './audit.js';
import { boundaryRoutes } from './boundary.js';
import { budgetRoutes } from './budgets.js';
import { capabilityRoutes } from './capabilities.js';
import { deadLetterRoutes } from './dead-letters.js';
import { sendError, type ControlApiDeps, type RouteModule } from './deps.js';
import { memoryRoutes } from './memories.js';
import { modeRoutes } from './modes.js';
import { modelRoutes } from './models.js';
import { principalRoutes } from './principals.js';
import { profileRoutes } from './profiles.js';
import { replicaRoutes } from './replicas.js';
import { ruleRoutes } from './rules.js';
import { sessionAdminRoutes } from './session-admin.js';
import { sessionCompactRoutes } from './session-compact.js';
import { sessionRoutes } from './sessions.js';
import { statsRoutes } from './stats.js';
import { tokenRoutes } from './tokens.js';
import { usageRoutes } from './usage.js';

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
export const ROUTE_MODULES: readonly RouteModule[] = [
  authRoutes,
  meRoutes,
  eventsRoute,
  statsRoutes,
  sessionRoutes,
  sessionAdminRoutes,
  sessionCompactRoutes,
  approvalRoutes,
  boundaryRoutes,
  principalRoutes,
  profileRoutes,
  modeRoutes,
  tokenRoutes,
  ruleRoutes,
  capabilityRoutes,
  modelRoutes,
  auditRoutes,
  deadLetterRoutes,
  usageRoutes,
  budgetRoutes,
  memoryRoutes,
  replicaRoutes,
];

async function authenticate(deps: ControlApiDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  // Keyed on the client address: the socket's peer, or what a trusted proxy (gateway.trustedProxies) reports.
  await authenticateRequest(deps, req, reply);
}

/**
 * The operators' control API under /api/v1: auth before body parsing (an operator token as Bearer or a
 * console session cookie with the CSRF header on changes), a scope per route; the console's sign-in and members' `/me` routes.
 */
export async function controlApi(app: FastifyInstance, deps: ControlApiDeps): Promise<void> {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onRequest', async (req, reply) => authenticate(deps, req, reply));
  // Bodies are JSON only: without this parser a text/plain body gets 415, not a confusing 400.
  app.removeContentTypeParser('text/plain');
  app.setErrorHandler((err: Error & { statusCode?: number; validation?: unknown; code?: string }, req, reply) => {
    if (err.validation) return sendError(reply, 400, 'bad_request', err.message);
    if (isSwbError(err, SwbErrorCode.StorageUnavailable)) {
      // The database is away for now (a restart, the network): the request can be sent again unchanged.
      req.log.warn({ err }, 'control API request failed: the database is unreachable');
      reply.header('retry-after', '5');
      return sendError(reply, 503, 'storage_unavailable', 'The database is unreachable right now; try again shortly.');
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) req.log.error({ err }, 'control API error');
    // Fastify's own codes (FST_ERR_CTP_INVALID_JSON_BODY, …) are internals: clients get the HTTP meaning.
    const code =
      !err.code || err.code.startsWith('FST_')
        ? status === 413
          ? 'payload_too_large'
          : status === 415
            ? 'unsupported_media_type'
            : 'bad_request'
        : err.code.toLowerCase();
    if (status === 415) {
      const type = String(req.headers['content-type'] ?? '').slice(0, 100);
      return sendError(reply, 415, code, `Request bodies must be JSON (Content-Type: application/json); got ${JSON.stringify(type)}.`);
    }
    return sendError(reply, status, status === 500 ? 'internal' : code, status === 500 ? 'Internal error.' : err.message);
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, 404, 'not_found', `No route ${req.method} ${req.url.split('?')[0]}.`));
  for (const mod of ROUTE_MODULES) await mod(app, deps);
}

export { sendError } from './deps.js';
export type { ControlApiDeps } from './deps.js';
