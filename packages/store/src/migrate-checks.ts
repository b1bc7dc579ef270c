import type Database from 'better-sqlite3';
import type pg from 'pg';
import { StorageMigrationError, type TablePlan } from './migrate-plan.js';

// The checks migrate-storage makes before it writes: both databases at this version's schema, the target empty.

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

// Tables the migrations or SQLite keep for themselves: the FTS5 index is rebuilt by PostgreSQL's generated tsvector.
const SQLITE_INTERNAL = /^(sqlite_|__drizzle_migrations$|memories_fts)/;

/** Every table of the SQLite database is in the plan, with the plan's columns. */
export function checkSqliteSchema(sqlite: Database.Database, plans: readonly TablePlan[]): void {
  const tables = (sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>)
    .map((t) => t.name)
    .filter((t) => !SQLITE_INTERNAL.test(t));
  const unknown = tables.filter((t) => !plans.some((p) => p.name === t));
  if (unknown.length > 0)
    throw new StorageMigrationError(`the SQLite database has table(s) this version does not know how to copy: ${unknown.join(', ')}`, unknown[0]);
  for (const p of plans) {
    const have = (sqlite.prepare(`PRAGMA table_info(${q(p.name)})`).all() as Array<{ name: string }>).map((c) => c.name).sort();
    const want = p.columns.map((c) => c.name).sort();
    if (have.join() !== want.join())
      throw new StorageMigrationError(`the SQLite table ${p.name} is not at this version's schema (columns ${have.join(', ') || 'none'})`, p.name);
  }
}

/** Every planned table exists on PostgreSQL with exactly the columns of the PostgreSQL schema module. */
export async function checkPgSchema(client: pg.ClientBase, plans: readonly TablePlan[]): Promise<void> {
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'",
  );
  for (const p of plans) {
    const have = rows
      .filter((r) => r.table_name === p.name)
      .map((r) => r.column_name)
      .sort();
    if (have.join() !== [...p.pgColumns].sort().join())
      throw new StorageMigrationError(`the PostgreSQL table ${p.name} is not at this version's schema (columns ${have.join(', ') || 'none'})`, p.name);
  }
}

/** Refuses a target with any row in any table, naming the first such table. */
export async function requireEmpty(client: pg.ClientBase, plans: readonly TablePlan[]): Promise<void> {
  for (const p of plans) {
    const { rows } = await client.query(`SELECT 1 FROM ${q(p.name)} LIMIT 1`);
    if (rows.length > 0)
      throw new StorageMigrationError(
        `the target database is not empty: table ${p.name} has rows. migrate-storage copies into an empty database only: create a new database (createdb) and pass its URL, or drop and recreate this one if nothing in it is needed`,
        p.name,
      );
  }
}
