import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type MigrationProgress,
  migrateSqliteToPostgres,
  migrationPlan,
  openPostgresStorage,
  openSqliteStorage,
  StorageMigrationError,
  schema,
} from '../src/index.js';
import { fillEveryTable, normalizeRows } from './migrate-fill.js';

// migrate-storage on a real PostgreSQL server: each test migrates a fresh SQLite file into a fresh
// database copied from one migrated template.
let server: PgServer;
let dir: string;
const TEMPLATE = 'sb_migrate_template';
let files = 0;

beforeAll(async () => {
  server = await startPostgres();
  await (await openPostgresStorage({ url: await server.createDatabase({ name: TEMPLATE }) })).close();
  dir = mkdtempSync(join(tmpdir(), 'swb-migrate-'));
});
afterAll(async () => {
  await server?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const target = () => server.createDatabase({ template: TEMPLATE });
/** A fresh, migrated SQLite file, filled by `fill`. */
async function sourceWith(fill: (s: ReturnType<typeof openSqliteStorage>) => void | Promise<void>): Promise<string> {
  const file = join(dir, `src-${++files}.db`);
  const s = openSqliteStorage({ file });
  try {
    await fill(s);
  } finally {
    s.close();
  }
  return file;
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function pgCounts(url: string): Promise<Record<string, number>> {
  return withClient(url, async (c) => {
    const out: Record<string, number> = {};
    for (const p of migrationPlan()) out[p.name] = Number((await c.query(`SELECT count(*) AS n FROM "${p.name}"`)).rows[0].n);
    return out;
  });
}

describe('migrationPlan', () => {
  it('covers every table of the SQLite schema module and of a migrated SQLite database, parents before children', () => {
    const plans = migrationPlan();
    const names = plans.map((p) => p.name);
    const moduleTables = Object.values(schema).map((t) => (t as unknown as Record<symbol, string>)[Symbol.for('drizzle:Name')]);
    expect([...names].sort()).toEqual([...moduleTables].sort());
    const s = openSqliteStorage({ file: ':memory:' });
    const dbTables = (s.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>)
      .map((t) => t.name)
      .filter((t) => !/^(sqlite_|__drizzle_migrations$|memories_fts)/.test(t));
    for (const p of plans) {
      // A foreign key points at a table copied earlier, or its column is set after every table is in.
      for (const fk of s.db.prepare(`PRAGMA foreign_key_list("${p.name}")`).all() as Array<{ table: string; from: string }>) {
        const placed = names.indexOf(fk.table) < names.indexOf(p.name) || fk.table === p.name;
        expect(placed || p.deferred.some((d) => d.name === fk.from), `${p.name}.${fk.from} → ${fk.table}`).toBe(true);
      }
    }
    s.close();
    expect([...names].sort()).toEqual([...dbTables].sort());
    expect(plans.find((p) => p.name === 'inbox')?.deferred.map((d) => d.name)).toEqual(['turn_id']);
  });
});

describe('migrateSqliteToPostgres', () => {
  it('copies every table, row for row, with the same count and checksum on both sides, and reports each table', async () => {
    const file = await sourceWith((s) => fillEveryTable(s.db, 7));
    const url = await target();
    const progress: MigrationProgress[] = [];
    const report = await migrateSqliteToPostgres({ sqliteFile: file, url, onProgress: (p) => progress.push(p) });
    const plans = migrationPlan();
    expect(report.tables.map((t) => t.table)).toEqual(plans.map((p) => p.name));
    for (const t of report.tables) {
      expect(t.rows, t.table).toBe(7);
      expect(t.checksum).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(report.rows).toBe(7 * plans.length);
    expect(progress.filter((p) => p.phase === 'copy').map((p) => p.table)).toEqual(plans.map((p) => p.name));
    expect(progress.filter((p) => p.phase === 'verify')).toHaveLength(plans.length);
    // Independently of the checksum code: every value reads back the same from both engines.
    const lite = openSqliteStorage({ file });
    await withClient(url, async (c) => {
      for (const p of plans) {
        const cols = [...(p.rowid ? ['rowid'] : []), ...p.columns.map((x) => x.name)];
        const sel = cols.map((x) => `"${x}"`).join(', ');
        const want = normalizeRows(lite.db.prepare(`SELECT ${sel} FROM "${p.name}"`).all() as Array<Record<string, unknown>>, cols);
        const got = normalizeRows((await c.query(`SELECT ${sel} FROM "${p.name}"`)).rows, cols);
        expect(got, p.name).toEqual(want);
      }
      const memory = (await c.query('SELECT search FROM memories ORDER BY seq LIMIT 1')).rows[0];
      expect(memory.search).toBe('memories text 0 zoe cafe tag0');
    });
    lite.close();
  });

  it('keeps the data usable on PostgreSQL: identities continue after the copied maximum, memories are searchable, tokens resolve', async () => {
    const hash = 'a'.repeat(64);
    let lastAudit = 0;
    const file = await sourceWith(async (s) => {
      const ada = await s.principals.create({ name: 'ada', role: 'owner' });
      await s.tokens.create({ kind: 'client', name: 'phone', principalId: ada.id, scopes: [], secretHash: hash });
      for (let i = 0; i < 5; i++) lastAudit = await s.audit.append({ actor: 'gateway', action: 'test.entry', detail: { i } });
      await s.memories.save({ scope: 'private', principalId: ada.id, text: 'Zoë prefers her espresso without sugar', tags: ['coffee'], createdBy: ada.id });
    });
    const url = await target();
    await migrateSqliteToPostgres({ sqliteFile: file, url });
    const onPg = await openPostgresStorage({ url, max: 2 });
    try {
      const next = await onPg.audit.append({ actor: 'gateway', action: 'test.after' });
      expect(next).toBeGreaterThan(lastAudit);
      const ada = await onPg.principals.byName('ada');
      expect(ada?.role).toBe('owner');
      const hits = await onPg.memories.search({ text: 'zoe ESPRESSO', scopes: [{ scope: 'private', principalId: ada!.id }], limit: 5 });
      expect(hits.map((h) => h.memory.text)).toEqual(['Zoë prefers her espresso without sugar']);
      const resolved = await onPg.tokens.byHash(hash);
      expect(resolved?.principalId).toBe(ada!.id);
    } finally {
      await onPg.close();
    }
  });

  it('refuses a target with any row, naming the table and how to proceed, and changes nothing', async () => {
    const file = await sourceWith((s) => fillEveryTable(s.db, 3));
    const url = await target();
    await migrateSqliteToPostgres({ sqliteFile: file, url });
    const before = await pgCounts(url);
    const second = await migrateSqliteToPostgres({ sqliteFile: file, url }).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(StorageMigrationError);
    expect((second as Error).message).toMatch(/target database is not empty: table principals has rows.*create a new database/);
    expect(await pgCounts(url)).toEqual(before);

    // One row in a table late in the order is enough.
    const other = await target();
    await withClient(other, (c) => c.query("INSERT INTO cursors (key, value, updated_at) VALUES ('telegram:default:offset', '1', 1)"));
    await expect(migrateSqliteToPostgres({ sqliteFile: file, url: other })).rejects.toThrow(/table cursors has rows/);
  });

  it('detects a value altered or a row dropped on the way in, rolls back and names the table', async () => {
    const file = await sourceWith((s) => fillEveryTable(s.db, 4));
    for (const [change, expected] of [
      ["NEW.rule := NEW.rule || ' (changed)'; RETURN NEW;", /table rules: the checksum on PostgreSQL differs/],
      ["IF NEW.id = 'rules.id.2 Zoë café' THEN RETURN NULL; END IF; RETURN NEW;", /table rules: 4 row\(s\) in SQLite but 3 on PostgreSQL/],
    ] as const) {
      const url = await target();
      await withClient(url, async (c) => {
        await c.query(`CREATE FUNCTION tamper() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${change} END $$`);
        await c.query('CREATE TRIGGER tamper BEFORE INSERT ON rules FOR EACH ROW EXECUTE FUNCTION tamper()');
      });
      const err = await migrateSqliteToPostgres({ sqliteFile: file, url }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StorageMigrationError);
      expect((err as StorageMigrationError).table).toBe('rules');
      expect((err as Error).message).toMatch(expected);
      expect(Object.values(await pgCounts(url)).every((n) => n === 0)).toBe(true);
    }
  });

  it('orders text keys byte-wise on both sides, also in a database whose default collation is a language one (ICU en-US)', async () => {
    const file = await sourceWith((s) => {
      const insert = s.db.prepare('INSERT INTO principals (id, name, role, created_at) VALUES (?, ?, ?, 1)');
      for (const id of ['B', 'a', 'A', '_z', 'a-b', 'ab', 'é', 'e', 'Z1', 'z10', 'z9']) insert.run(id, `name ${id}`, 'member');
    });
    const name = `sb_icu_${files}`;
    await withClient(server.url(), (c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`));
    const url = server.url(name);
    const order = await withClient(url, async (c) => (await c.query("SELECT x FROM unnest(ARRAY['B', 'a', '_z']) AS x ORDER BY x")).rows.map((r) => r.x));
    expect(order).not.toEqual(['B', '_z', 'a']); // the database's own order is not byte order, so the copy must not rely on it
    const report = await migrateSqliteToPostgres({ sqliteFile: file, url });
    expect(report.tables.find((t) => t.table === 'principals')?.rows).toBe(11);
  });

  it('copies 100k rows in batches of one array parameter per column (PostgreSQL allows 65,535 parameters), however large batchRows is', async () => {
    const perTable = Math.ceil(100_000 / migrationPlan().length);
    const file = await sourceWith((s) => fillEveryTable(s.db, perTable));
    const url = await target();
    const started = performance.now();
    const report = await migrateSqliteToPostgres({ sqliteFile: file, url, batchRows: 1_000_000 });
    const ms = Math.round(performance.now() - started);
    expect(report.rows).toBeGreaterThanOrEqual(100_000);
    expect(Object.values(await pgCounts(url)).every((n) => n === perTable)).toBe(true);
    // Measured, not asserted (no wall-clock thresholds): printed for the record.
    process.stdout.write(`migrate-storage: ${report.rows} rows in ${ms} ms\n`);
  });

  it('refuses a SQLite database with a table this version does not copy, and a missing file', async () => {
    const file = await sourceWith((s) => {
      s.db.exec('CREATE TABLE extra_notes (id TEXT PRIMARY KEY)');
    });
    await expect(migrateSqliteToPostgres({ sqliteFile: file, url: await target() })).rejects.toThrow(
      /table\(s\) this version does not know how to copy: extra_notes/,
    );
    await expect(migrateSqliteToPostgres({ sqliteFile: join(dir, 'missing.db'), url: await target() })).rejects.toThrow(/no SQLite database at/);
  });

  it('reports an unreachable server without the password', async () => {
    const file = await sourceWith(() => undefined);
    const wrong = new URL(server.url());
    wrong.password = 'hunter2-secret';
    const err = await migrateSqliteToPostgres({ sqliteFile: file, url: wrong.toString(), connectionTimeout: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageMigrationError);
    expect((err as Error).message).toMatch(/cannot open the PostgreSQL database: .*password authentication failed/);
    expect((err as Error).message).not.toContain('hunter2-secret');
  });

  it('copies hostile text and JSON unchanged, and refuses a NUL character naming the table, row and column (nothing is copied)', async () => {
    const ROW = 'principals.id.1 Zoë café';
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          // Array-literal syntax too: the rows travel as PostgreSQL arrays (unnest).
          name: fc.oneof(fc.constantFrom('NULL', '{"a,b"}', '\\', '"', '{}', '', ' ', 'null'), fc.string({ unit: 'binary', maxLength: 30 })),
          payload: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null'),
          text: fc.string({ unit: 'grapheme', maxLength: 60 }),
          nul: fc.boolean(),
        }),
        async ({ name, payload, text, nul }) => {
          const stored = nul ? `${name}\u0000${name}` : name;
          const file = await sourceWith((s) => {
            fillEveryTable(s.db, 2);
            s.db.prepare('UPDATE principals SET name = ? WHERE id = ?').run(stored, ROW);
            s.db.prepare('UPDATE entries SET payload = ?').run(payload);
            s.db.prepare('UPDATE memories SET text = ?').run(text);
          });
          const url = await target();
          const result = await migrateSqliteToPostgres({ sqliteFile: file, url }).catch((e: unknown) => e);
          if (stored.includes('\u0000') || text.includes('\u0000')) {
            expect(result).toBeInstanceOf(StorageMigrationError);
            expect((result as Error).message).toMatch(/^table (principals|memories), row (id|seq)=.*: column (name|text) holds a NUL character \(U\+0000\)/);
            expect(Object.values(await pgCounts(url)).every((n) => n === 0)).toBe(true);
            return;
          }
          expect(result).not.toBeInstanceOf(Error);
          const lite = openSqliteStorage({ file });
          const want = {
            name: (lite.db.prepare('SELECT name FROM principals WHERE id = ?').get(ROW) as { name: string }).name,
            payloads: (lite.db.prepare('SELECT payload FROM entries ORDER BY session_id, seq').all() as Array<{ payload: string }>).map((r) => r.payload),
            texts: (lite.db.prepare('SELECT text FROM memories ORDER BY seq').all() as Array<{ text: string }>).map((r) => r.text),
          };
          lite.close();
          const got = await withClient(url, async (c) => ({
            name: (await c.query('SELECT name FROM principals WHERE id = $1', [ROW])).rows[0].name,
            payloads: (await c.query('SELECT payload FROM entries ORDER BY session_id COLLATE "C", seq')).rows.map((r) => r.payload),
            texts: (await c.query('SELECT text FROM memories ORDER BY seq')).rows.map((r) => r.text),
          }));
          expect(got).toEqual(want);
          expect(JSON.parse(got.payloads[0])).toEqual(JSON.parse(payload));
        },
      ),
      { numRuns: 16, examples: [[{ name: 'NULL', payload: JSON.stringify({ a: '\\', b: 'NULL', c: '{}' }), text: '{"a,b"} \\ NULL', nul: false }]] },
    );
  });
});
