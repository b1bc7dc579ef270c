import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ConsoleConfig } from '../config-console.js';

/** Path prefixes that are never the console's: a mistyped webhook or API URL keeps its 404. */
export const RESERVED_PREFIXES = ['/api', '/v1', '/ws', '/channels', '/docs', '/files', '/healthz', '/readyz', '/metrics'] as const;

/** The headers of every console answer (pages, assets, the single-page fallback); other routes (Swagger UI at /docs) keep their own. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Whether a request path (no query) is under one of {@link RESERVED_PREFIXES}. */
export function isReserved(path: string): boolean {
  const p = path.toLowerCase();
  return RESERVED_PREFIXES.some((prefix) => p === prefix || p.startsWith(`${prefix}/`));
}

/**
 * The app's index.html for `basePath`: the build references its assets absolutely (`="/assets/…"`;
 * no `<base>`, which the CSP's `base-uri 'none'` forbids), so under another base path they move there.
 */
export function withBase(html: string, basePath: string): string {
  return basePath === '/' ? html : html.replaceAll('="/assets/', `="${basePath}assets/`);
}

/** The console build's directory: `console.root`, or the installed `@switchboard/console` package's `dist`; null when not installed. */
export function consoleRoot(cfg: ConsoleConfig): string | null {
  if (cfg.root !== undefined) return resolve(cfg.root);
  try {
    return join(dirname(createRequire(import.meta.url).resolve('@switchboard/console/package.json')), 'dist');
  } catch {
    return null;
  }
}

/** The console's static files and single-page fallback. */
export interface ConsoleSite {
  /** Registers the static files under `basePath` (when built). */
  register(app: FastifyInstance): Promise<void>;
  /**
   * The not-found fallback: a GET under `basePath` that accepts `text/html` and is not reserved
   * gets the app's `index.html` (503 text when the console is not built). False: not the console's, answer 404.
   */
  fallback(req: FastifyRequest, reply: FastifyReply): Promise<boolean>;
}

/** The console site over `cfg` (the build is looked for once; a missing one is logged once). */
export function consoleSite(cfg: ConsoleConfig, log: Logger): ConsoleSite {
  const root = consoleRoot(cfg);
  const built = root !== null && existsSync(join(root, 'index.html'));
  if (!built) {
    log.warn(
      { event: 'console_not_built', root },
      `console: no built console at ${root ?? '@switchboard/console (not installed)'}; ${cfg.basePath} answers 503 until it is built (npm run build -w @switchboard/console)`,
    );
  }
  const base = cfg.basePath;
  const withHeaders = (reply: FastifyReply) => reply.headers(CONSOLE_HEADERS);
  return {
    async register(app) {
      if (!built) return;
      await app.register(async (scope) => {
        scope.addHook('onSend', async (_req, reply, payload) => {
          withHeaders(reply);
          return payload;
        });
        // index.html is never served as a file: the fallback serves it (at basePath too), with its asset URLs under basePath.
        await scope.register(fastifyStatic, { root: root!, prefix: base, wildcard: false, decorateReply: false, index: false, globIgnore: ['index.html'] });
      });
    },
    async fallback(req, reply) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      const path = req.url.split('?')[0]!;
      const under = path.startsWith(base) || `${path}/` === base;
      if (!under || isReserved(path) || !String(req.headers.accept ?? '').includes('text/html')) return false;
      withHeaders(reply);
      if (`${path}/` === base && base !== '/') {
        await reply.code(308).header('location', base).send();
        return true;
      }
      if (!built) {
        await reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('The console is not built on this gateway (npm run build -w @switchboard/console); the control API works.');
        return true;
      }
      const html = withBase(await readFile(join(root!, 'index.html'), 'utf8'), base);
      await reply.code(200).type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(html);
      return true;
    },
  };
}
