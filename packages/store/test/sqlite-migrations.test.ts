import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
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
    expect(tables).toEqual(expect.arrayContaining(['deliveries', 'entries', 'identities', 'inbox', 'principals', 'sessions', 'tokens', 'turns']));
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

  it('moves held messages stored as JSON (before 0004) into pairing_held rows, in order', async () => {
    const dir = join(root, 'until-0003');
    cpSync(defaultMigrationsDir(), dir, { recursive: true });
    const upTo = JSON.parse(readFileSync(join(dir, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
    upTo.entries = upTo.entries.slice(
      0,
      upTo.entries.findIndex((e) => e.tag.startsWith('0004')),
    );
    writeFileSync(join(dir, 'meta', '_journal.json'), JSON.stringify(upTo));
    const file = join(root, 'held-json.db');
    // The repositories of today need today's schema: migrate the old file with drizzle directly.
    const old = { db: new Database(file) };
    migrate(drizzle({ client: old.db }), { migrationsFolder: dir });
    const msg = (key: string, text: string) => ({ dedupeKey: key, channel: 'telegram', account: 'bot', text, receivedAt: '2026-01-01T00:00:00.000Z' });
    const insert = old.db.prepare(
      `INSERT INTO pairing_requests (code, channel, account, identity, display_name, conversation, held, status, principal_id, decided_by, created_at, expires_at)
       VALUES (?, 'telegram', 'bot', ?, NULL, '{"channel":"telegram","account":"bot","id":"1","kind":"dm"}', ?, 'pending', NULL, NULL, 1, ?)`,
    );
    insert.run('AAAAAAAA', 'telegram:1', JSON.stringify([msg('k1', 'first'), msg('k2', 'second')]), Date.now() + 3_600_000);
    insert.run('BBBBBBBB', 'telegram:2', 'not json', Date.now() + 3_600_000);
    old.db.close();

    const s = openSqliteStorage({ file });
    expect((await s.pairing.held('AAAAAAAA')).map((m) => [m.dedupeKey, m.text])).toEqual([
      ['k1', 'first'],
      ['k2', 'second'],
    ]);
    expect(await s.pairing.get('AAAAAAAA')).toMatchObject({ heldCount: 2, status: 'pending' });
    expect(await s.pairing.get('BBBBBBBB')).toMatchObject({ heldCount: 0 });
    expect((await s.pairing.heldSeen('telegram', 'bot', 'telegram:1', 'k2'))?.code).toBe('AAAAAAAA');
    const cols = s.db.prepare(`SELECT name FROM pragma_table_info('pairing_requests')`).pluck().all();
    expect(cols).not.toContain('held');
    s.close();
  });
});
