import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import type { GatewayProcess } from '@switchboard/testkit';

/** The `storage` section a test gateway was started with (SQLite when it has none). */
export function storageOf(gw: GatewayProcess): { kind: 'sqlite' | 'postgres'; url?: string } {
  const s = gw.config.storage as { kind?: string; url?: string } | undefined;
  return s?.kind === 'postgres' && s.url ? { kind: 'postgres', url: s.url } : { kind: 'sqlite' };
}

// int8 (counts, identities) as numbers, as the gateway's own pool reads them.
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === 20 || oid === 1700) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/**
 * Runs a read-only query on a test gateway's own store, whichever engine it runs on: the SQLite
 * file `<dataDir>/switchboard.db`, or its PostgreSQL database. `?` placeholders (SQLite's) are
 * numbered for PostgreSQL; the SQL must mean the same on both.
 */
export async function storeRows<R>(gw: GatewayProcess, sql: string, params: readonly unknown[] = []): Promise<R[]> {
  const storage = storageOf(gw);
  if (storage.kind === 'sqlite') {
    const db = new Database(join(gw.dataDir, 'switchboard.db'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare(sql).all(...params) as R[];
    } finally {
      db.close();
    }
  }
  let n = 0;
  const client = new pg.Client({ connectionString: storage.url, types });
  await client.connect();
  try {
    return (
      await client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params as unknown[],
      )
    ).rows as R[];
  } finally {
    await client.end();
  }
}
