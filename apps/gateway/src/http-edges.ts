import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The longest request path (without the query) the gateway reads; longer ones get 414. */
export const MAX_PATH_LENGTH = 2048;

/** The `gateway` config keys that set the HTTP server's timeouts (milliseconds). */
export interface HttpTimeouts {
  headersTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
}

/**
 * Fastify options for the HTTP server: explicit timeouts (a slow client is cut off after
 * `gateway.headersTimeout` for its headers, `gateway.requestTimeout` for its whole request, and
 * `gateway.connectionTimeout` of silence), and Fastify's own routing errors answered as
 * `{ code, message }` like every other error.
 */
export function httpServerOptions(t: HttpTimeouts) {
  return {
    connectionTimeout: t.connectionTimeout,
    requestTimeout: t.requestTimeout,
    // Node checks these timeouts on an interval (30 s by default): check often enough to honour them.
    http: { headersTimeout: t.headersTimeout, connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(t.headersTimeout / 2))) },
    frameworkErrors: (err: FastifyError, _req: FastifyRequest, reply: FastifyReply) => {
      if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') return reply.code(414).send({ code: 'uri_too_long', message: 'A path segment is too long.' });
      if (err.code === 'FST_ERR_BAD_URL') return reply.code(400).send({ code: 'bad_url', message: 'The request path is not a valid URL.' });
      const status = typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 400;
      return reply.code(status).send({ code: 'bad_request', message: err.message });
    },
  };
}

/**
 * Root-level answers that apply to every route: 414 for an over-long path, 404 as `{ code, message }`
 * — unless `fallback` answers it first (the console's single-page fallback).
 */
export function registerHttpEdges(app: FastifyInstance, fallback?: (req: FastifyRequest, reply: FastifyReply) => Promise<boolean>): void {
  app.addHook('onRequest', async (req, reply) => {
    const q = req.url.indexOf('?');
    const pathLength = q < 0 ? req.url.length : q;
    if (pathLength > MAX_PATH_LENGTH) {
      return reply.code(414).send({ code: 'uri_too_long', message: `The request path is longer than ${MAX_PATH_LENGTH} characters.` });
    }
  });
  app.setNotFoundHandler(async (req, reply) => {
    if (fallback && (await fallback(req, reply))) return reply;
    return reply.code(404).send({ code: 'not_found', message: `No route ${req.method} ${req.url.split('?')[0]!.slice(0, 200)}.` });
  });
}
