import { join } from 'node:path';
import type { Storage } from '@switchboard/core';
import { describePgError, openPostgresStorage, openSqliteStorage, scrubDatabaseUrl } from '@switchboard/store';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { acquireInstanceLock, type InstanceLock } from '../instance-lock.js';
import { prepareDataDir, StartupError } from '../startup-errors.js';

/**
 * Start-up step: the data dir is usable and no other gateway holds it. Runs before anything is
 * written to the data dir; the lock records the configured listen address until the listen
 * succeeded ({@link InstanceLock.update}).
 */
export function openDataDir(gateway: Readonly<Config['gateway']>): InstanceLock {
  prepareDataDir(gateway.dataDir);
  return acquireInstanceLock(gateway.dataDir, { host: gateway.host, port: gateway.port });
}

/** The opened database and, for SQLite, its file (the policy protects the file from the file tools). */
export interface OpenedStorage {
  storage: Storage;
  databaseFile?: string;
}

/**
 * Start-up step: opens (and migrates) the store `storage.kind` names — SQLite's
 * `<dataDir>/switchboard.db`, or the PostgreSQL server at `storage.url`. A server that cannot be
 * reached or migrated is a {@link StartupError} naming `storage.url` with the server's reason
 * (never the password). `scrub` removes the config's secrets from that reason.
 */
export async function openStorage(cfg: Readonly<Config>, log: Logger, scrub: (text: string) => string): Promise<OpenedStorage> {
  const { storage } = cfg;
  if (storage.kind === 'sqlite') {
    const databaseFile = join(cfg.gateway.dataDir, 'switchboard.db');
    log.info({ event: 'storage_open', engine: 'sqlite', file: databaseFile }, 'storage: SQLite');
    return { storage: openSqliteStorage({ file: databaseFile }), databaseFile };
  }
  const where = scrubDatabaseUrl(storage.url);
  const dbLog = log.child({ component: 'storage' });
  try {
    const opened = await openPostgresStorage({
      url: storage.url,
      max: storage.pool.max,
      statementTimeout: storage.statementTimeout,
      connectionTimeout: storage.connectionTimeout,
      // An idle connection's failure (the server restarted): the pool drops it; the health check reports the outage.
      onError: (err) =>
        dbLog.warn({ event: 'storage_connection_lost', error: scrub(describePgError(err)) }, 'a pooled database connection failed; it is dropped'),
    });
    log.info({ event: 'storage_open', engine: 'postgres', url: where, poolMax: storage.pool.max }, 'storage: PostgreSQL');
    return { storage: opened };
  } catch (err) {
    // A host name with several addresses fails as an AggregateError without a message: its first address's reason says it.
    const first = err instanceof AggregateError && err.errors.length > 0 ? err.errors[0] : err;
    const why = scrub(describePgError(first));
    throw new StartupError(
      `storage.url: cannot open the PostgreSQL database at ${where}: ${why}; check that the server runs and that storage.url (or DATABASE_URL) names it with the right user, password and database`,
      'storage.url',
    );
  }
}
