import pg from 'pg';
import { SwbError, SwbErrorCode } from '@switchboard/core';

// The connection plumbing every PostgreSQL repository uses: one pool, plain parameterised SQL
// (`$1`, `$2`, …), and transactions that behave like SQLite's `BEGIN IMMEDIATE` (see `tx`).

/** int8 (counts, epoch ms, identities) and numeric (`sum` of int8) as JS numbers: every value the schema stores fits 2^53. */
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20 || oid === 1700) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** Runs SQL on a pool or inside a transaction. */
export interface Sql {
  /** Every row. */
  rows<R>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** The first row, or undefined. */
  row<R>(text: string, params?: readonly unknown[]): Promise<R | undefined>;
  /** How many rows the statement changed. */
  run(text: string, params?: readonly unknown[]): Promise<number>;
}

export interface PgDb extends Sql {
  readonly pool: pg.Pool;
  /**
   * Runs `fn` in one transaction, retried from the start on a serialization failure or deadlock
   * (so `fn` must have no effect outside the transaction). SERIALIZABLE by default: writes that
   * read before they write then behave as if run one after another, as SQLite's `BEGIN IMMEDIATE`
   * transactions do. The turn path's writes pass `read committed`: each of them takes the row lock
   * that orders it first (the session row, the turn row, a cursor lock) or resolves a conflict by
   * re-reading, so they need no predicate locks — which, at 32 sessions writing at once, made
   * SERIALIZABLE abort most of them. Multi-statement reads pass `repeatable read` (one snapshot).
   */
  tx<T>(fn: (q: Sql) => Promise<T>, isolation?: Isolation): Promise<T>;
}

/** A transaction's isolation level (see {@link PgDb.tx}). */
export type Isolation = 'serializable' | 'repeatable read' | 'read committed';

/** Pool settings (config `storage.pool`, `storage.statementTimeout`). */
export interface PgPoolOptions {
  url: string;
  /** Connections at most (config `storage.pool.max`). */
  max?: number;
  /** Milliseconds a statement may run before the server cancels it (config `storage.statementTimeout`). */
  statementTimeout?: number;
  /** Milliseconds to wait for a connection (from the pool or the server) before failing. */
  connectionTimeout?: number;
  /** Called when an idle connection fails (the server restarted, the network dropped): never thrown. */
  onError?: (err: Error) => void;
}

const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 50;

/** PostgreSQL `text` cannot hold U+0000 (SQLite can): it is stored as U+FFFD, the replacement character. */
export function pgText(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s;
}

const params = (ps: readonly unknown[]): unknown[] => ps.map((p) => (typeof p === 'string' ? pgText(p) : p));

// Errors of the connection rather than of the statement: the server went away, refuses
// connections for now, or none could be had in time. Class 08 is "connection exception"; 57P01-3
// are admin/crash shutdown and "cannot connect now" (starting up, recovering).
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENOENT']);
const CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end)/;

/**
 * Whether `err` (or an error in its `cause` chain, or one of an AggregateError's) says the database
 * could not be reached, as opposed to a statement's own failure.
 */
export function isConnectionError(err: unknown, depth = 0): boolean {
  if (depth > 5 || typeof err !== 'object' || err === null) return false;
  if (err instanceof SwbError) return err.code === SwbErrorCode.StorageUnavailable;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || CONNECTION_ERRNOS.has(code)))
    return true;
  const message = (err as { message?: unknown }).message;
  if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
  const inner = (err as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.some((e) => isConnectionError(e, depth + 1))) return true;
  return isConnectionError((err as { cause?: unknown }).cause, depth + 1);
}

/** A connection failure as the typed, retryable `SWB_E_STORAGE_UNAVAILABLE` (the driver's error as its cause); other errors as they are. */
export function asStorageError(err: unknown): unknown {
  if (err instanceof SwbError || !isConnectionError(err)) return err;
  const why = err instanceof Error ? err.message || err.name : 'connection failed';
  return new SwbError(SwbErrorCode.StorageUnavailable, `The database is unreachable (${why}); try again shortly.`, { cause: err });
}

async function query(q: pg.Pool | pg.PoolClient, text: string, ps: readonly unknown[]): Promise<pg.QueryResult> {
  try {
    return await q.query(text, params(ps));
  } catch (err) {
    throw asStorageError(err);
  }
}

function bind(q: pg.Pool | pg.PoolClient): Sql {
  return {
    async rows<R>(text: string, ps: readonly unknown[] = []) {
      return (await query(q, text, ps)).rows as R[];
    },
    async row<R>(text: string, ps: readonly unknown[] = []) {
      return (await query(q, text, ps)).rows[0] as R | undefined;
    },
    async run(text: string, ps: readonly unknown[] = []) {
      return (await query(q, text, ps)).rowCount ?? 0;
    },
  };
}

/** Creates the pool (no connection is made until the first query). */
export function createPgDb(opts: PgPoolOptions): PgDb {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: opts.connectionTimeout ?? 5000,
    idleTimeoutMillis: 30_000,
    ...(opts.statementTimeout ? { statement_timeout: opts.statementTimeout } : {}),
    idle_in_transaction_session_timeout: 60_000,
    application_name: 'switchboard',
    types,
  });
  // An idle client's error (the server went away) is emitted on the pool: unhandled, it would end the process.
  pool.on('error', (err) => opts.onError?.(err));
  const sql = bind(pool);
  return {
    pool,
    ...sql,
    async tx<T>(fn: (q: Sql) => Promise<T>, isolation: Isolation = 'serializable'): Promise<T> {
      for (let attempt = 1; ; attempt++) {
        const client = await pool.connect().catch((err: unknown) => {
          throw asStorageError(err);
        });
        let broken = false;
        // Between two statements the client has no query to fail: a server that ends the
        // connection then (a shutdown, a terminated backend) makes the client emit 'error', which
        // the pool no longer listens for while the client is checked out. Without a listener that
        // is an uncaught exception; with it, the next statement fails and the client is dropped.
        const onError = () => {
          broken = true;
        };
        client.on('error', onError);
        try {
          await client.query(`BEGIN ISOLATION LEVEL ${isolation.toUpperCase()}`);
          const result = await fn(bind(client));
          await client.query('COMMIT');
          return result;
        } catch (err) {
          if (isConnectionError(err)) broken = true;
          try {
            if (!broken) await client.query('ROLLBACK');
          } catch {
            broken = true; // the connection is gone: do not hand it back to the pool
          }
          const code = (err as { code?: unknown } | null)?.code;
          if (typeof code === 'string' && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) {
            // Jittered, growing back-off: contenders that collided spread out instead of colliding again.
            await new Promise((r) => setTimeout(r, Math.random() * Math.min(100, 2 ** Math.min(attempt, 7))));
            continue;
          }
          throw asStorageError(err);
        } finally {
          client.removeListener('error', onError);
          client.release(broken);
        }
      }
    },
  };
}

/** The URL with its password (and any `password=` parameter) replaced by `***`: safe to log. */
export function scrubDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    for (const k of [...u.searchParams.keys()]) if (/pass|secret|key/i.test(k)) u.searchParams.set(k, '***');
    return u.toString();
  } catch {
    return '<a database URL that does not parse>';
  }
}

/** A stable 64-bit key for `pg_advisory_lock`, from a name. */
export function advisoryKey(name: string): bigint {
  let h = 0xcbf29ce484222325n;
  for (const c of Buffer.from(name)) {
    h ^= BigInt(c);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return BigInt.asIntN(64, h);
}

/**
 * Takes a transaction-scoped advisory lock: insertions into a table read by a monotonic cursor
 * (`usage.rowid`, `deliveries.id`, `audit.id`) take it so that ids become visible in id order (an
 * identity value is allocated at insert but visible only at commit; without the lock a reader
 * could move past an id a slower transaction commits later).
 */
export async function lockCursor(q: Sql, table: string): Promise<void> {
  await q.run('SELECT pg_advisory_xact_lock($1)', [advisoryKey(`switchboard:cursor:${table}`).toString()]);
}
