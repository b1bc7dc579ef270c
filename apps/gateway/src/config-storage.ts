import { z } from 'zod';
import { duration } from '@switchboard/core';

const bounded = (min: number, max: number, label: string) => duration.pipe(z.number().min(min, `must be at least ${label}`).max(max, 'must be at most 10min'));

/**
 * Whether `url` is a `postgres://` or `postgresql://` URL with a host. The message never quotes
 * the value: it may carry the password.
 */
function checkPostgresUrl(url: string): string | null {
  if (url === '') return 'is required when storage.kind is "postgres" (e.g. "${DATABASE_URL}")';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL; expected postgres://user:password@host:5432/database';
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    return `must start with postgres:// or postgresql:// (got a ${parsed.protocol.replace(/:$/, '') || 'schemeless'} URL)`;
  }
  if (parsed.hostname === '' && !parsed.searchParams.has('host')) return 'names no host; expected postgres://user:password@host:5432/database';
  return null;
}

/**
 * `storage`: where the gateway keeps its state. `sqlite` (the default) is the embedded database
 * `<dataDir>/switchboard.db`; `postgres` is a server at `url`. `url` is only read (and required)
 * for `postgres` (unset, it is `DATABASE_URL` from the environment): a `DATABASE_URL` or a
 * `url` set for a SQLite gateway is ignored, so one config template serves both engines.
 */
export const storageSchema = z
  .strictObject({
    kind: z.enum(['sqlite', 'postgres']).default('sqlite'),
    /** The PostgreSQL connection URL (`postgres://user:password@host:5432/db`); its password is never logged. */
    url: z.string().max(4096).default(''),
    pool: z
      .strictObject({
        /** Connections to the server at most. */
        max: z.number().int().min(1).max(1000).default(10),
      })
      .prefault({}),
    /** The server cancels a statement running longer than this. */
    statementTimeout: bounded(100, 600_000, '100ms').default(30_000),
    /** How long a query waits for a connection (from the pool, or a new one to the server) before it fails. */
    connectionTimeout: bounded(100, 600_000, '100ms').default(5_000),
    /** How often the database is pinged for `/readyz` (and unfinished turns resumed once it is back). */
    healthInterval: bounded(200, 600_000, '200ms').default(5_000),
    /** Replicas on PostgreSQL: how they tell each other what changed (LISTEN/NOTIFY; only read for `postgres`). */
    fanout: z
      .strictObject({
        /** How long streamed frames staged for other replicas' viewers are kept (replayed after a dropped listening connection). */
        retention: bounded(1_000, 600_000, '1s').default(120_000),
        /** Wait between attempts to reconnect the listening connection. */
        reconnectDelay: bounded(200, 600_000, '200ms').default(1_000),
      })
      .prefault({}),
  })
  .superRefine((s, ctx) => {
    if (s.kind !== 'postgres') return;
    const problem = checkPostgresUrl(s.url);
    if (problem) ctx.addIssue({ code: 'custom', path: ['url'], message: problem });
  })
  .prefault({});

/** The `storage` section as parsed. */
export type StorageConfig = z.output<typeof storageSchema>;

/** The password of a database URL as written and decoded (for log scrubbing); none when it has none or does not parse. */
export function databaseSecrets(url: string): string[] {
  try {
    const raw = new URL(url).password;
    if (raw === '') return [];
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // a malformed escape: the raw form is what appears anywhere
    }
    return decoded === raw ? [raw] : [raw, decoded];
  } catch {
    return [];
  }
}
