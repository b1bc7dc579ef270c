import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type Database from 'better-sqlite3';
import pg from 'pg';
import {
  type Cell,
  type ColumnKind,
  type CopiedColumn,
  canonicalCell,
  canonicalRow,
  migrationPlan,
  StorageMigrationError,
  type TablePlan,
} from './migrate-plan.js';
import { checkPgSchema, checkSqliteSchema, requireEmpty } from './migrate-checks.js';
import { describePgError, openPostgresStorage } from './pg/postgres-storage.js';
import { openSqliteStorage } from './sqlite-storage.js';

/** A batch is sent once its text values reach this many bytes, however few rows it has (transcripts can be large). */
const BATCH_BYTES = 8 * 1024 * 1024;
const VERIFY_FETCH = 2000;

/** One table's result: rows copied and the sha256 both engines agree on. */
export interface TableReport {
  readonly table: string;
  readonly rows: number;
  readonly checksum: string;
}

/** Reported after each table is copied, then after each is verified. */
export interface MigrationProgress {
  readonly phase: 'copy' | 'verify';
  readonly table: string;
  readonly rows: number;
  /** 1-based position of the table, and the number of tables. */
  readonly index: number;
  readonly of: number;
}

/** Options for {@link migrateSqliteToPostgres}. */
export interface MigrateStorageOptions {
  /** The stopped gateway's SQLite file (`<dataDir>/switchboard.db`); migrated to the latest schema first. */
  sqliteFile: string;
  /** The target database (migrated to the latest schema first; it must hold no row). */
  url: string;
  /** Rows per INSERT at most (default 5000; a batch is also sent once its text reaches 8 MB). Each INSERT has one array parameter per column. */
  batchRows?: number;
  /** Milliseconds to wait for the server (default 10 s). */
  connectionTimeout?: number;
  onProgress?: (p: MigrationProgress) => void;
}

/** The result of a committed migration. */
export interface MigrationReport {
  readonly tables: readonly TableReport[];
  readonly rows: number;
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
const PG_TYPE: Record<ColumnKind, string> = { integer: 'bigint', real: 'double precision', text: 'text' };
const orderBy = (plan: TablePlan, engine: 'sqlite' | 'postgres') =>
  plan.key.map((k) => (engine === 'postgres' && k.kind === 'text' ? `${q(k.name)} COLLATE "C"` : q(k.name))).join(', ');

/** The checksummed columns, in checksum order: rowid, the SQLite columns, the derived ones. */
function checked(plan: TablePlan): Array<{ name: string; kind: ColumnKind }> {
  return [
    ...(plan.rowid ? [{ name: 'rowid', kind: 'integer' as const }] : []),
    ...plan.columns,
    ...plan.derived.map((d) => ({ name: d.name, kind: 'text' as const })),
  ];
}

function describeKey(plan: TablePlan, row: Record<string, unknown>): string {
  const text = plan.key.map((k) => `${k.name}=${JSON.stringify(String(row[k.name]))}`).join(', ');
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** A SQLite cell as PostgreSQL will store it, or a refusal naming the table, row and column: a value is copied unchanged or not at all. */
function sourceCell(plan: TablePlan, col: CopiedColumn, row: Record<string, unknown>): Cell {
  const v = row[col.name];
  const refuse = (why: string) =>
    new StorageMigrationError(
      `table ${plan.name}, row ${describeKey(plan, row)}: column ${col.name} ${why}; nothing was copied. Fix or delete that row in the SQLite database, then run migrate-storage again`,
      plan.name,
    );
  if (v === null || v === undefined) return null;
  if (col.kind === 'integer' && typeof v !== 'bigint')
    throw refuse(`holds ${typeof v === 'number' ? 'a real number' : `a ${typeof v}`} where an integer belongs`);
  if (col.kind === 'real' && typeof v !== 'number') {
    if (typeof v === 'bigint') return Number(v);
    throw refuse(`holds a ${typeof v} where a number belongs`);
  }
  if (col.kind === 'text') {
    if (typeof v !== 'string') throw refuse(`holds ${v instanceof Uint8Array ? 'binary data' : `a ${typeof v}`} where text belongs`);
    if (v.includes('\u0000')) throw refuse('holds a NUL character (U+0000), which PostgreSQL text cannot store');
  }
  return v as Cell;
}

interface Copied {
  rows: number;
  checksum: string;
  /** Key and deferred values of rows whose deferred columns are set after every table is in. */
  later: Cell[][];
}

async function copyTable(sqlite: Database.Database, client: pg.ClientBase, plan: TablePlan, batchRows: number): Promise<Copied> {
  const select = `SELECT ${plan.rowid ? 'rowid AS "rowid", ' : ''}${plan.columns.map((c) => q(c.name)).join(', ')} FROM ${q(plan.name)} ORDER BY ${orderBy(plan, 'sqlite')}`;
  const cols = checked(plan);
  // One array parameter per column (unnest): the statement's parameter count is the column count,
  // however many rows the batch has, and the server parses one short statement per batch.
  const insert = `INSERT INTO ${q(plan.name)} (${cols.map((c) => q(c.name)).join(', ')}) SELECT * FROM unnest(${cols.map((c, i) => `$${i + 1}::${PG_TYPE[c.kind]}[]`).join(', ')})`;
  const deferred = cols.map((c) => plan.deferred.some((d) => d.name === c.name));
  const hash = createHash('sha256');
  const later: Cell[][] = [];
  let batch: unknown[][] = cols.map(() => []);
  let batched = 0;
  let bytes = 0;
  let rows = 0;
  const flush = async () => {
    if (batched === 0) return;
    await client.query(insert, batch);
    batch = cols.map(() => []);
    batched = 0;
    bytes = 0;
  };
  for (const row of sqlite.prepare(select).safeIntegers(true).iterate() as IterableIterator<Record<string, unknown>>) {
    const cells: Cell[] = [];
    if (plan.rowid) cells.push(row.rowid as bigint);
    for (const col of plan.columns) cells.push(sourceCell(plan, col, row));
    for (const d of plan.derived) cells.push(d.compute(row));
    hash.update(canonicalRow(cells.map((v, i) => canonicalCell(v, cols[i]!.kind, 'sqlite'))));
    if (plan.deferred.some((c) => row[c.name] !== null)) {
      later.push([...plan.key.map((k) => sourceCell(plan, k, row)), ...plan.deferred.map((c) => sourceCell(plan, c, row))]);
    }
    cells.forEach((v, i) => {
      batch[i]!.push(deferred[i] ? null : typeof v === 'bigint' ? v.toString() : v);
      if (typeof v === 'string') bytes += v.length;
    });
    batched++;
    rows++;
    if (batched >= batchRows || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
  return { rows, checksum: hash.digest('hex'), later };
}

/** Sets the columns that closed a foreign-key cycle, in batches (one array parameter per column, like the inserts). */
async function setDeferred(client: pg.ClientBase, plan: TablePlan, later: Cell[][], batchRows: number): Promise<void> {
  const cols = [...plan.key, ...plan.deferred];
  const set = plan.deferred.map((c, i) => `${q(c.name)} = v.c${i}`).join(', ');
  const match = plan.key.map((k, i) => `t.${q(k.name)} = v.k${i}`).join(' AND ');
  const names = [...plan.key.map((_, i) => `k${i}`), ...plan.deferred.map((_, i) => `c${i}`)].join(', ');
  const arrays = cols.map((c, i) => `$${i + 1}::${PG_TYPE[c.kind]}[]`).join(', ');
  const update = `UPDATE ${q(plan.name)} AS t SET ${set} FROM unnest(${arrays}) AS v(${names}) WHERE ${match}`;
  for (let at = 0; at < later.length; at += Math.max(1, batchRows)) {
    const batch = later.slice(at, at + Math.max(1, batchRows));
    await client.query(
      update,
      cols.map((_, i) => batch.map((r) => (typeof r[i] === 'bigint' ? r[i].toString() : r[i]))),
    );
  }
}

/** The table's rows and checksum as PostgreSQL holds them, read in the same order and canonical form as the source. */
async function verifyTable(client: pg.ClientBase, plan: TablePlan): Promise<{ rows: number; checksum: string }> {
  const cols = checked(plan);
  await client.query(
    `DECLARE swb_verify NO SCROLL CURSOR FOR SELECT ${cols.map((c) => q(c.name)).join(', ')} FROM ${q(plan.name)} ORDER BY ${orderBy(plan, 'postgres')}`,
  );
  const hash = createHash('sha256');
  let rows = 0;
  for (;;) {
    const page = await client.query<Cell[]>({ text: `FETCH FORWARD ${VERIFY_FETCH} FROM swb_verify`, rowMode: 'array' });
    for (const r of page.rows) hash.update(canonicalRow(r.map((v, i) => canonicalCell(v, cols[i]!.kind, 'postgres'))));
    rows += page.rows.length;
    if (page.rows.length < VERIFY_FETCH) break;
  }
  await client.query('CLOSE swb_verify');
  return { rows, checksum: hash.digest('hex') };
}

/**
 * Copies every table of a stopped gateway's SQLite database into an empty PostgreSQL database, in
 * one PostgreSQL transaction: both sides are first migrated to the latest schema and compared,
 * rows go in foreign-key order in parameter batches, identity sequences continue past the copied
 * maxima, and each table's row count and checksum (sha256 of its rows in key order, every column
 * in canonical form, computed from both engines) must agree before COMMIT. Any refusal or mismatch
 * is a {@link StorageMigrationError} and leaves the target as it was. Messages never hold the URL.
 */
export async function migrateSqliteToPostgres(opts: MigrateStorageOptions): Promise<MigrationReport> {
  if (!existsSync(opts.sqliteFile)) throw new StorageMigrationError(`there is no SQLite database at ${opts.sqliteFile}`);
  const plans = migrationPlan();
  const sqlite = openSqliteStorage({ file: opts.sqliteFile });
  try {
    checkSqliteSchema(sqlite.db, plans);
    const connectionTimeout = opts.connectionTimeout ?? 10_000;
    try {
      await (await openPostgresStorage({ url: opts.url, max: 1, connectionTimeout })).close();
    } catch (err) {
      throw new StorageMigrationError(`cannot open the PostgreSQL database: ${describePgError(err)}`);
    }
    const client = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis: connectionTimeout, application_name: 'switchboard-migrate' });
    client.on('error', () => undefined); // a lost connection fails the running query, which reports it
    try {
      await client.connect();
      return await copyAll(sqlite.db, client, plans, opts);
    } catch (err) {
      if (err instanceof StorageMigrationError) throw err;
      throw new StorageMigrationError(`the copy failed and was rolled back: ${describePgError(err)}`);
    } finally {
      await client.end().catch(() => undefined);
    }
  } finally {
    sqlite.close();
  }
}

async function copyAll(sqlite: Database.Database, client: pg.ClientBase, plans: readonly TablePlan[], opts: MigrateStorageOptions): Promise<MigrationReport> {
  await checkPgSchema(client, plans);
  const progress = (phase: MigrationProgress['phase'], table: string, rows: number, i: number) =>
    opts.onProgress?.({ phase, table, rows, index: i + 1, of: plans.length });
  await client.query('BEGIN');
  sqlite.exec('BEGIN'); // one snapshot of the source for the whole copy
  try {
    await client.query("SET LOCAL lock_timeout = '10s'");
    await client.query('SET LOCAL statement_timeout = 0');
    // Writers wait (and a second migration finds the rows) until this one commits or rolls back.
    await client.query(`LOCK TABLE ${plans.map((p) => q(p.name)).join(', ')} IN SHARE ROW EXCLUSIVE MODE`);
    await requireEmpty(client, plans);
    const copied = new Map<string, Copied>();
    for (const [i, p] of plans.entries()) {
      const c = await copyTable(sqlite, client, p, Math.max(1, opts.batchRows ?? 5000));
      copied.set(p.name, c);
      progress('copy', p.name, c.rows, i);
    }
    for (const p of plans) if (p.deferred.length > 0) await setDeferred(client, p, copied.get(p.name)!.later, opts.batchRows ?? 5000);
    const tables: TableReport[] = [];
    for (const [i, p] of plans.entries()) {
      const source = copied.get(p.name)!;
      const target = await verifyTable(client, p);
      if (target.rows !== source.rows)
        throw new StorageMigrationError(
          `table ${p.name}: ${source.rows} row(s) in SQLite but ${target.rows} on PostgreSQL after the copy; rolled back`,
          p.name,
        );
      if (target.checksum !== source.checksum)
        throw new StorageMigrationError(`table ${p.name}: the checksum on PostgreSQL differs from SQLite's (a value changed in the copy); rolled back`, p.name);
      tables.push({ table: p.name, rows: source.rows, checksum: source.checksum });
      progress('verify', p.name, source.rows, i);
    }
    for (const p of plans) {
      for (const col of p.identities) {
        await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), COALESCE((SELECT max(${q(col)}) FROM ${q(p.name)}), 0) + 1, false)`, [
          q(p.name),
          col,
        ]);
      }
    }
    await client.query('COMMIT');
    return { tables, rows: tables.reduce((n, t) => n + t.rows, 0) };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
  }
}
