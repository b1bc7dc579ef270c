import type { Storage } from '@switchboard/core';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, beforeAll } from 'vitest';
import { openPostgresStorage, openSqliteStorage, type PostgresStorage, type SqliteStorage } from '../src/index.js';

/** Where a storage lives, in a form another process can open too. */
export type StorageTarget = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** One storage engine under test. */
export interface Engine {
  readonly name: 'sqlite' | 'postgres';
  /** A fresh, empty, migrated storage (SQLite in memory; PostgreSQL in a new database). */
  open(): Promise<SqliteStorage | PostgresStorage>;
  /** A fresh, empty, migrated database another process can open: SQLite in the file `sqliteFile`. */
  target(sqliteFile: string): Promise<StorageTarget>;
}

/** Opens a target (in this process). */
export async function openTarget(t: StorageTarget): Promise<SqliteStorage | PostgresStorage> {
  return t.kind === 'sqlite' ? openSqliteStorage({ file: t.file }) : openPostgresStorage({ url: t.url, max: 4 });
}

/** Runs a statement on either engine's raw handle (tests that damage rows on purpose). */
export async function rawExec(s: Storage, sql: string): Promise<void> {
  const engine = s as SqliteStorage | PostgresStorage;
  if (engine.engine === 'postgres') await engine.db.run(sql);
  else engine.db.prepare(sql).run();
}

const TEMPLATE = 'sb_engines_template';

/**
 * Both engines, for `describe.each`: call once at a test file's top level. It starts one real
 * PostgreSQL server for the file (beforeAll, with a migrated template database each test copies)
 * and destroys it afterwards.
 */
export function engines(): [string, Engine][] {
  let server: PgServer | undefined;
  beforeAll(async () => {
    server = await startPostgres();
    const s = await openPostgresStorage({ url: await server.createDatabase({ name: TEMPLATE }) });
    await s.close();
  });
  afterAll(async () => server?.destroy());
  const pgUrl = async (): Promise<string> => {
    if (!server) throw new Error('the PostgreSQL server is not started (engines() must run at the top level of the test file)');
    return server.createDatabase({ template: TEMPLATE });
  };
  const sqlite: Engine = {
    name: 'sqlite',
    async open() {
      return openSqliteStorage({ file: ':memory:' });
    },
    async target(file) {
      openSqliteStorage({ file }).close();
      return { kind: 'sqlite', file };
    },
  };
  const postgres: Engine = {
    name: 'postgres',
    async open() {
      return openPostgresStorage({ url: await pgUrl(), max: 4 });
    },
    async target() {
      return { kind: 'postgres', url: await pgUrl() };
    },
  };
  return [
    ['sqlite', sqlite],
    ['postgres', postgres],
  ];
}
