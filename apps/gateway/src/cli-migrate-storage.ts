import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type MigrationReport, migrateSqliteToPostgres, scrubDatabaseUrl } from '@switchboard/store';
import JSON5 from 'json5';
import { type CliOutcome, failed } from './cli-admin.js';
import { dataDirOf } from './cli-remote.js';
import { ConfigError, interpolate } from './config.js';
import { databaseSecrets } from './config-storage.js';
import { acquireInstanceLock, InstanceLockedError } from './instance-lock.js';
import { EXIT_CONFIG, EXIT_LOCKED } from './startup-errors.js';

/** The flags of `switchboard migrate-storage`. */
export interface MigrateStorageFlags {
  from?: string;
  to?: string;
  url?: string;
}

/** The PostgreSQL URL in the config's `storage.url` (with `${VAR}` expanded), read without validating the rest: '' when unset. */
export function storageUrlOf(file: string, env: NodeJS.ProcessEnv): string {
  let raw: unknown;
  try {
    raw = JSON5.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(code ? `cannot read the config file ${file}: ${code}` : `the config is not valid JSON5: ${(err as Error).message}`);
  }
  const storage = raw && typeof raw === 'object' && !Array.isArray(raw) && Object.hasOwn(raw, 'storage') ? (raw as { storage: unknown }).storage : undefined;
  if (!storage || typeof storage !== 'object' || Array.isArray(storage) || !Object.hasOwn(storage, 'url')) return '';
  const url = interpolate((storage as { url: unknown }).url, env, ['storage', 'url']);
  if (typeof url !== 'string') throw new ConfigError('storage.url: expected a string');
  return url;
}

/** `text` with the URL's password (as written and decoded) replaced, and the URL itself scrubbed: every message goes through here. */
function scrub(text: string, url: string): string {
  if (url === '') return text;
  let out = text.split(url).join(scrubDatabaseUrl(url));
  for (const secret of databaseSecrets(url)) out = out.split(secret).join('***');
  return out;
}

function urlProblem(url: string): string | null {
  try {
    const u = new URL(url);
    if (u.protocol === 'postgres:' || u.protocol === 'postgresql:') return null;
  } catch {
    // reported below
  }
  return 'the target is not a postgres:// or postgresql:// URL';
}

/** The per-table counts and checksums, and the line the operator acts on next. */
function summary(report: MigrationReport, target: string, configFile: string, sqliteFile: string): string {
  const width = Math.max(...report.tables.map((t) => t.table.length));
  const rowsWidth = Math.max(...report.tables.map((t) => String(t.rows).length));
  const lines = report.tables.map((t) => `${t.table.padEnd(width)}  ${String(t.rows).padStart(rowsWidth)}  sha256:${t.checksum}`);
  return [
    ...lines,
    `migrated ${report.rows} row(s) in ${report.tables.length} tables to ${target}; every count and checksum matched.`,
    `next: set storage.kind to "postgres" (and storage.url, or DATABASE_URL, to this database) in ${configFile}, then start the gateway; ${sqliteFile} is unchanged: switching storage.kind back to "sqlite" rolls back.`,
    '',
  ].join('\n');
}

/**
 * `switchboard migrate-storage --from sqlite --to postgres [--url <url>]`: copies the stopped
 * gateway's `<dataDir>/switchboard.db` into an empty PostgreSQL database (the target: `--url`,
 * else the config's `storage.url`, else `DATABASE_URL`), holding the data dir's instance lock so
 * that no gateway starts meanwhile. Progress goes to `progress` (stderr); no output ever holds
 * the URL's password. Exit: 2 usage, 78 config, 75 a gateway runs, 1 refused or failed (nothing
 * written), 0 migrated.
 */
export async function migrateStorageCommand(
  flags: MigrateStorageFlags,
  configFile: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  progress: (line: string) => void,
): Promise<CliOutcome> {
  if (flags.from !== 'sqlite' || flags.to !== 'postgres') {
    return failed(
      `migrate-storage copies a SQLite database into PostgreSQL only: pass --from sqlite --to postgres (got --from ${flags.from ?? '(none)'} --to ${flags.to ?? '(none)'})`,
      2,
    );
  }
  let dataDir: string;
  let fromConfig: string;
  try {
    dataDir = dataDirOf(configFile, env, cwd);
    fromConfig = flags.url ? '' : storageUrlOf(configFile, env);
  } catch (err) {
    if (err instanceof ConfigError) return failed(`${scrub(err.message, flags.url ?? env.DATABASE_URL ?? '')}\n(config file: ${configFile})`, EXIT_CONFIG);
    throw err;
  }
  const url = flags.url || fromConfig || env.DATABASE_URL || '';
  if (url === '') return failed('no target database: pass --url postgres://user:password@host:5432/database, or set storage.url (or DATABASE_URL)', 2);
  const problem = urlProblem(url);
  if (problem) return failed(`${problem}; expected postgres://user:password@host:5432/database`, 2);
  const target = scrubDatabaseUrl(url);
  const sqliteFile = join(dataDir, 'switchboard.db');
  if (!existsSync(sqliteFile)) return failed(`there is no SQLite database at ${sqliteFile}: nothing to migrate (is ${configFile} this gateway's config?)`, 1);

  let lock: ReturnType<typeof acquireInstanceLock>;
  try {
    lock = acquireInstanceLock(dataDir);
  } catch (err) {
    if (err instanceof InstanceLockedError) {
      return failed(`${err.message}; stop it first: migrate-storage copies a stopped gateway's database`, EXIT_LOCKED);
    }
    return failed(`cannot lock the data dir ${dataDir}: ${err instanceof Error ? err.message : String(err)}`, 1);
  }
  try {
    progress(`migrating ${sqliteFile} to ${target}`);
    const report = await migrateSqliteToPostgres({
      sqliteFile,
      url,
      onProgress: (p) => progress(`${p.phase === 'copy' ? 'copied' : 'verified'} ${p.table}: ${p.rows} row(s) [${p.index}/${p.of}]`),
    });
    return { code: 0, stdout: summary(report, target, configFile, sqliteFile) };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return failed(`migrate-storage: ${scrub(message, url)}`, 1);
  } finally {
    lock.release();
  }
}
