import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type { Storage } from '@switchboard/core';
import { advisoryKey, createPgDb, type PgDb, type PgPoolOptions } from './db.js';
import { pgBoundaryRepos } from './boundary-repo.js';
import { pgBudgetRepo } from './budget-repo.js';
import { pgCursorRepo } from './cursor-repo.js';
import { pgDeadLetterRepo } from './dead-letter-repo.js';
import { pgDeliveryOps, pgDeliveryRepo } from './delivery-repo.js';
import { pgGovernanceRepos } from './governance-repo.js';
import { pgMemoryRepo } from './memory-repo.js';
import { pgOfferSwitchRepo } from './offer-switch-repo.js';
import { pgPrincipalRepo, pgTokenRepo } from './principal-repo.js';
import { pgInstructionFileRepo, pgProfileRepo } from './profile-repo.js';
import { pgSessionOps, pgSessionRepo } from './session-repo.js';
import { pgSessionLeases } from './session-leases.js';
import { pgSharedCounters } from './shared-counters.js';
import { pgSidechainRepo } from './sidechain-repo.js';
import { pgTurnRepo } from './turn-repo.js';
import { pgUsageOps, pgUsageRepo } from './usage-repo.js';

/** Options for {@link openPostgresStorage}. */
export interface PostgresStorageOptions extends PgPoolOptions {
  /** Folder of drizzle-kit migrations; defaults to the repository's top-level `migrations-pg/`. */
  migrationsDir?: string;
}

/** The PostgreSQL-backed {@link Storage}, with its connection pool for diagnostics and tests. */
export interface PostgresStorage extends Storage {
  readonly engine: 'postgres';
  readonly db: PgDb;
}

/** The top-level `migrations-pg/` folder, resolved from this module (src/pg and dist/pg sit at the same depth). */
export function defaultPgMigrationsDir(): string {
  return fileURLToPath(new URL('../../../../migrations-pg', import.meta.url));
}

/** The advisory lock every start-up takes around its migrations: replicas starting at once migrate one after another. */
export const MIGRATION_LOCK = advisoryKey('switchboard:migrations');

/** Applies pending migrations on one connection, under the migration advisory lock. */
export async function migratePostgres(db: PgDb, migrationsDir = defaultPgMigrationsDir()): Promise<void> {
  const client = await db.pool.connect();
  let broken = false;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    try {
      await migrate(drizzle({ client }), { migrationsFolder: migrationsDir });
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]).catch(() => {
        broken = true;
      });
    }
  } catch (err) {
    broken = true;
    throw err;
  } finally {
    client.release(broken);
  }
}

/** The storage over a pool whose schema is current (see {@link openPostgresStorage}). */
export function postgresStorage(db: PgDb): PostgresStorage {
  const ops = pgSessionOps();
  const ledger = pgDeliveryOps();
  const calls = pgUsageOps();
  let closed: Promise<void> | null = null;
  return {
    engine: 'postgres',
    db,
    principals: pgPrincipalRepo(db),
    tokens: pgTokenRepo(db),
    sessions: pgSessionRepo(db, ops),
    turns: pgTurnRepo(db, ops, ledger, calls),
    deliveries: pgDeliveryRepo(db, ledger),
    deadLetters: pgDeadLetterRepo(db),
    ...pgGovernanceRepos(db),
    ...pgBoundaryRepos(db),
    usage: pgUsageRepo(db, calls),
    budgets: pgBudgetRepo(db),
    offerSwitches: pgOfferSwitchRepo(db),
    memories: pgMemoryRepo(db),
    profiles: pgProfileRepo(db),
    instructionFiles: pgInstructionFileRepo(db),
    sidechains: pgSidechainRepo(db),
    cursors: pgCursorRepo(db),
    sessionLeases: pgSessionLeases(db),
    counters: pgSharedCounters(db),
    async ping() {
      try {
        await db.row('SELECT 1');
        return { ok: true };
      } catch (err) {
        return { ok: false, error: describePgError(err) };
      }
    },
    close() {
      closed ??= db.pool.end().catch(() => undefined);
      return closed;
    },
  };
}

/**
 * Connects to PostgreSQL, applies pending migrations (under an advisory lock) and returns the
 * {@link Storage} over a pool. Rejects with the server's error (the URL's password never appears).
 */
export async function openPostgresStorage(opts: PostgresStorageOptions): Promise<PostgresStorage> {
  const db = createPgDb(opts);
  try {
    await migratePostgres(db, opts.migrationsDir);
  } catch (err) {
    await db.pool.end().catch(() => undefined);
    throw err;
  }
  return postgresStorage(db);
}

/** A one-line description of a driver or server error, without the connection string. */
export function describePgError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const msg = err.message || err.name;
    return typeof code === 'string' && code !== '' ? `${msg} (${code})` : msg;
  }
  return typeof err === 'string' ? err : 'unknown database error';
}
