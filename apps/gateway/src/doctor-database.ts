import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DoctorCheck } from '@switchboard/core';
import { createPgDb, defaultPgMigrationsDir, describePgError, scrubDatabaseUrl } from '@switchboard/store';
import type { Config } from './config.js';

/** How many migrations a drizzle-kit folder holds (its journal's entries). */
function migrationCount(dir: string): number {
  const journal = JSON.parse(readFileSync(join(dir, 'meta', '_journal.json'), 'utf8')) as { entries?: unknown[] };
  return Array.isArray(journal.entries) ? journal.entries.length : 0;
}

/**
 * The database line of `switchboard doctor`: for SQLite, where the file lives; for PostgreSQL,
 * whether the server at `storage.url` answers with these credentials, and whether its schema is
 * current (pending migrations are applied at the next start; a newer schema than this gateway
 * knows fails). The URL is shown with its password as `***`.
 */
export async function checkDatabase(cfg: Readonly<Config>, timeoutMs: number, migrationsDir = defaultPgMigrationsDir()): Promise<DoctorCheck> {
  if (cfg.storage.kind === 'sqlite') return { ok: true, title: `database: SQLite at ${join(cfg.gateway.dataDir, 'switchboard.db')}` };
  const where = scrubDatabaseUrl(cfg.storage.url);
  const title = `database: PostgreSQL at ${where} reachable, migrations current`;
  const db = createPgDb({ url: cfg.storage.url, max: 1, connectionTimeout: Math.min(cfg.storage.connectionTimeout, timeoutMs), statementTimeout: timeoutMs });
  try {
    await db.row('SELECT 1');
    const known = migrationCount(migrationsDir);
    const table = await db.row<{ present: boolean }>(`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present`);
    const applied = table?.present ? ((await db.row<{ n: number }>('SELECT count(*) AS n FROM drizzle.__drizzle_migrations'))?.n ?? 0) : 0;
    if (applied > known) {
      return {
        ok: false,
        title,
        detail: `the database has ${applied} migrations applied, this gateway knows ${known}`,
        fix: 'a newer gateway migrated this database: run that version, or point storage.url at another database',
      };
    }
    if (applied < known) return { ok: true, title, detail: `${known - applied} of ${known} migrations pending: the gateway applies them when it starts` };
    return { ok: true, title, detail: `${applied} of ${known} migrations applied` };
  } catch (err) {
    return {
      ok: false,
      title,
      detail: describePgError(err),
      fix: 'start the PostgreSQL server, or correct storage.url (or DATABASE_URL): host, port, user, password and database',
    };
  } finally {
    await db.pool.end().catch(() => undefined);
  }
}
