import { z } from 'zod';

/**
 * `metrics`: Prometheus metrics at `/metrics` (docs/metrics.md). Without `port` they are served on
 * the gateway's own port and need an operator token with `read`; with `port`, on a server of
 * their own at `host` (default 127.0.0.1) that asks for no token — so a non-loopback `host` must
 * be set on purpose, and the gateway warns about it at start-up.
 */
export const metricsSchema = z
  .strictObject({
    /** Serve `/metrics` at all (default true). */
    enabled: z.boolean().default(true),
    /** A port of their own for the metrics (0: any free port); unset: the gateway's port, behind a `read` token. */
    port: z.number().int().min(0).max(65535).optional(),
    /** Where the metrics port listens (only with `port`); default 127.0.0.1. */
    host: z.string().min(1).max(255).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.host !== undefined && m.port === undefined) {
      ctx.addIssue({ code: 'custom', path: ['host'], message: 'only applies with metrics.port (without a port the metrics are served on the gateway port)' });
    }
  })
  .prefault({});

/** The `metrics` section as parsed. */
export type MetricsConfig = z.output<typeof metricsSchema>;

/** The host the metrics port binds to. */
export const DEFAULT_METRICS_HOST = '127.0.0.1';

/** Whether `host` is a loopback address or `localhost` (a bind there is reachable from this machine only). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}
