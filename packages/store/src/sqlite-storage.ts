import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import type { Storage } from '@switchboard/core';
import { deadLetterRepo } from './dead-letter-repo.js';
import { deliveryOps, deliveryRepo } from './delivery-repo.js';
import { boundaryRepos } from './boundary-repo.js';
import { governanceRepos } from './governance-repo.js';
import { principalRepo, tokenRepo } from './principal-repo.js';
import { sessionOps, sessionRepo } from './session-repo.js';
import { turnRepo } from './turn-repo.js';
import { usageOps, usageRepo } from './usage-repo.js';
import { budgetRepo } from './budget-repo.js';
import { offerSwitchRepo } from './offer-switch-repo.js';
import { memoryRepo } from './memory-repo.js';
import { instructionFileRepo, profileRepo } from './profile-repo.js';
import { sidechainRepo } from './sidechain-repo.js';
import { cursorRepo } from './cursor-repo.js';

/** Options for {@link openSqliteStorage}. */
export interface SqliteStorageOptions {
  /** Database file path; `:memory:` for a throw-away database (tests). */
  file: string;
  /** Folder of drizzle-kit migrations; defaults to the repository's top-level `migrations/`. */
  migrationsDir?: string;
}

/** The SQLite-backed {@link Storage}, with its raw handle for diagnostics and tests. */
export interface SqliteStorage extends Storage {
  /** The database file this storage opened. */
  readonly file: string;
  /** The underlying better-sqlite3 handle. Bypassing the repositories skips their invariants. */
  readonly db: Database.Database;
}

/** The top-level `migrations/` folder, resolved from this module (src/ and dist/ sit at the same depth). */
export function defaultMigrationsDir(): string {
  return fileURLToPath(new URL('../../../migrations', import.meta.url));
}

const PRIVATE = 0o600;

// The database holds transcripts and token hashes: only the gateway's user may read it.
function createPrivateFile(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(file, 'wx', PRIVATE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  chmodSync(file, PRIVATE);
}

/**
 * Opens (creating if needed) a SQLite database, applies pending migrations and returns the
 * {@link Storage} over it. Synchronous: better-sqlite3 is, and start-up needs the schema anyway.
 */
export function openSqliteStorage(opts: SqliteStorageOptions): SqliteStorage {
  const inMemory = opts.file === ':memory:';
  if (!inMemory) createPrivateFile(opts.file);
  const db = new Database(opts.file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(drizzle({ client: db }), { migrationsFolder: opts.migrationsDir ?? defaultMigrationsDir() });
    if (!inMemory) {
      for (const side of [`${opts.file}-wal`, `${opts.file}-shm`]) if (existsSync(side)) chmodSync(side, PRIVATE);
    }
  } catch (err) {
    db.close();
    throw err;
  }

  const ops = sessionOps(db);
  const ledger = deliveryOps(db);
  const calls = usageOps(db);
  return {
    file: opts.file,
    db,
    principals: principalRepo(db),
    tokens: tokenRepo(db),
    sessions: sessionRepo(db, ops),
    turns: turnRepo(db, ops, ledger, calls),
    deliveries: deliveryRepo(db, ledger),
    deadLetters: deadLetterRepo(db),
    ...governanceRepos(db),
    ...boundaryRepos(db),
    usage: usageRepo(db, calls),
    budgets: budgetRepo(db),
    offerSwitches: offerSwitchRepo(db),
    memories: memoryRepo(db),
    profiles: profileRepo(db),
    instructionFiles: instructionFileRepo(db),
    sidechains: sidechainRepo(db),
    cursors: cursorRepo(db),
    engine: 'sqlite',
    async ping() {
      if (!db.open) return { ok: false, error: 'the database is closed' };
      return { ok: true };
    },
    close() {
      if (db.open) db.close();
    },
  };
}
