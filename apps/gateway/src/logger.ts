import { scrubSecretValues, scrubbableSecrets } from '@switchboard/core';
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';

/** Patterns of well-known secret shapes, scrubbed from any logged string. */
const SECRET_PATTERNS: RegExp[] = [
  /sk-ant-[A-Za-z0-9_-]+/g,
  /bot\d+:[A-Za-z0-9_-]+/g,
  /\b\d{6,}:[A-Za-z0-9_-]{20,}\b/g,
  /xox[abposr]-[A-Za-z0-9-]+/g,
  /xapp-[A-Za-z0-9-]+/g,
  /swb_[co]_[A-Za-z0-9_-]+/g,
];

/**
 * Replaces known secret values (those long enough to scrub by value, see `scrubSecretValues`)
 * and secret-shaped substrings.
 */
export function scrubber(secrets: readonly string[]): (s: string) => string {
  const values = scrubbableSecrets(secrets);
  return (s: string) => {
    let out = scrubSecretValues(s, values);
    for (const p of SECRET_PATTERNS) out = out.replace(p, '[redacted]');
    return out;
  };
}

function scrubDeep(value: unknown, scrub: (s: string) => string, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, scrub, depth + 1));
  // Class instances (requests, errors) are left to their serializers, which scrub what they emit.
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrubDeep(v, scrub, depth + 1)]));
}

/**
 * pino's own prettifier (`pino-pretty`), synchronous on stdout so nothing is lost when the process
 * exits right after its last line. Loaded only for a terminal.
 */
function prettyStdout(): DestinationStream {
  const mod = createRequire(import.meta.url)('pino-pretty') as { default?: unknown };
  const build = (mod.default ?? mod) as (opts: Record<string, unknown>) => DestinationStream;
  return build({ destination: 1, sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'service' });
}

/**
 * The gateway's pino logger: human-readable when stdout is a terminal (`pretty`, by default
 * `process.stdout.isTTY`), JSON lines otherwise (pipes, files, supervisors, tests); secret-bearing
 * keys and headers redacted by path, and every string of every log line scrubbed of known secret
 * values and shapes before either format sees it.
 */
export function createLogger(level: string, secrets: readonly string[], opts: { pretty?: boolean } = {}): Logger {
  const scrub = scrubber(secrets);
  const pretty = opts.pretty ?? process.stdout.isTTY === true;
  return pino(
    {
      level,
      base: { service: 'switchboard' },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["x-api-key"]',
          'req.headers["x-telegram-bot-api-secret-token"]',
          'req.headers["x-slack-signature"]',
          '*.apiKey',
          '*.token',
          '*.botToken',
          '*.appToken',
          '*.signingSecret',
          '*.secret',
          '*.password',
        ],
        censor: '[redacted]',
      },
      serializers: {
        // The serialized error is copied into a plain object so every string in it is scrubbed.
        err: (err: unknown) => scrubDeep(JSON.parse(JSON.stringify(pino.stdSerializers.err(err as Error))), scrub),
        req: (req: { method?: string; url?: string; id?: string; ip?: string }) => ({
          id: req.id,
          method: req.method,
          // The query string is dropped: tokens must never reach the log even when misplaced.
          url: typeof req.url === 'string' ? scrub(req.url.split('?')[0] ?? '') : undefined,
          ip: req.ip,
        }),
      },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => scrubDeep(a, scrub)) as Parameters<typeof method>);
        },
      },
    },
    pretty ? prettyStdout() : undefined,
  );
}
