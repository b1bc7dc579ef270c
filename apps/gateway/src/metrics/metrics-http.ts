import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { DEFAULT_METRICS_HOST, isLoopbackHost } from '../config-metrics.js';
import { httpServerOptions, type HttpTimeouts, registerHttpEdges } from '../http-edges.js';
import { type OperatorCheck, requireOperatorScope } from '../limited-verify.js';
import { listenError } from '../startup-errors.js';
import type { GatewayMetrics } from './gateway-metrics.js';

/** Answers one scrape: the exposition text, or 500 (logged) when a collector failed. */
async function sendScrape(metrics: GatewayMetrics, reply: FastifyReply, log: FastifyBaseLogger): Promise<FastifyReply> {
  let text: string;
  try {
    text = await metrics.scrape();
  } catch (err) {
    log.error({ err }, 'a metrics scrape failed');
    return reply.code(500).send({ code: 'internal', message: 'Collecting the metrics failed.' });
  }
  return reply.code(200).header('content-type', metrics.contentType).header('cache-control', 'no-store').send(text);
}

/**
 * `GET /metrics` on the gateway's own port: an operator token with `read` (or `admin`), checked
 * like the control API's — 401 without one, 403 without the scope, and a wrong token counts
 * towards the address's failed-auth lockout.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: GatewayMetrics, check: OperatorCheck): void {
  app.get('/metrics', async (req, reply) => {
    if (!(await requireOperatorScope(check, req, reply, 'read'))) return reply;
    return sendScrape(metrics, reply, req.log);
  });
}

/** A running metrics port. */
export interface MetricsServer {
  /** `http://host:port` of the bound port. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` without a token on a port of its own (`metrics.port`, at `metrics.host`,
 * default 127.0.0.1), with the gateway's HTTP timeouts and edges; anything else is 404. A
 * non-loopback host is warned about: whoever reaches it reads the metrics.
 */
export async function startMetricsServer(
  metrics: GatewayMetrics,
  at: { port: number; host?: string | undefined },
  timeouts: HttpTimeouts,
  log: Logger,
): Promise<MetricsServer> {
  const host = at.host ?? DEFAULT_METRICS_HOST;
  const app = Fastify({
    loggerInstance: log.child({ component: 'metrics' }) as unknown as FastifyBaseLogger,
    disableRequestLogging: true,
    ...httpServerOptions(timeouts),
  });
  registerHttpEdges(app);
  app.get('/metrics', async (req, reply) => sendScrape(metrics, reply, req.log));
  if (!isLoopbackHost(host)) {
    log.warn(
      { event: 'metrics_public_bind', host, port: at.port },
      `metrics.host ${host} is not a loopback address: anyone who reaches it can read the metrics without a token`,
    );
  }
  try {
    await app.listen({ host, port: at.port });
  } catch (err) {
    await app.close();
    throw listenError(err, host, at.port, 'metrics');
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : at.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info({ event: 'metrics_listening', url, host, port }, 'metrics listening');
  return { url, close: () => app.close() };
}
