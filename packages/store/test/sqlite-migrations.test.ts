import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultMigrationsDir, openSqliteStorage } from '../src/index.js';

const root = mkdtempSync(join(tmpdir(), 'swb-migr-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const journal = JSON.parse(readFileSync(join(defaultMigrationsDir(), 'meta', '_journal.json'), 'utf8')) as {
  entries: { tag: string }[];
};

describe('migrations', () => {
  it('default folder is the repository’s migrations/ with at least one migration', () => {
    expect(defaultMigrationsDir()).toBe(join(import.meta.dirname, '..', '..', '..', 'migrations'));
    expect(journal.entries.length).toBeGreaterThan(0);
    for (const e of journal.entries) expect(existsSync(join(defaultMigrationsDir(), `${e.tag}.sql`))).toBe(true);
  });

  it('apply on a fresh file and are a no-op on the next open', async () => {
    const file = join(root, 'fresh.db');
    const a = openSqliteStorage({ file });
    const applied = () => a.db.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get();
    expect(applied()).toBe(journal.entries.length);
    const tables = a.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all();
    expect(tables).toEqual(
      expect.arrayContaining(['deliveries', 'entries', 'identities', 'inbox', 'principals', 'sessions', 'tokens', 'turns']),
    );
    await a.principals.create({ name: 'ada', role: 'owner' });
    const schemaBefore = a.db.prepare('SELECT sql FROM sqlite_master ORDER BY name').pluck().all();
    a.close();

    const b = openSqliteStorage({ file });
    expect(b.db.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(journal.entries.length);
    expect(b.db.prepare('SELECT sql FROM sqlite_master ORDER BY name').pluck().all()).toEqual(schemaBefore);
    expect(await b.principals.count()).toBe(1);
    b.close();
  });

  it('creates the live-session partial unique index', () => {
    const s = openSqliteStorage({ file: ':memory:' });
    const sql = s.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'sessions_live_key_uq'`).pluck().get();
    expect(String(sql)).toMatch(/UNIQUE INDEX[\s\S]*WHERE ended_at IS NULL/);
    s.close();
  });

  it('honours a migrationsDir override and fails on a missing one', () => {
    const dir = join(root, 'copied-migrations');
    cpSync(defaultMigrationsDir(), dir, { recursive: true });
    const s = openSqliteStorage({ file: join(root, 'override.db'), migrationsDir: dir });
    expect(s.db.prepare('SELECT count(*) FROM __drizzle_migrations').pluck().get()).toBe(journal.entries.length);
    s.close();
    expect(() => openSqliteStorage({ file: join(root, 'bad.db'), migrationsDir: join(root, 'nope') })).toThrow();
  });
});
