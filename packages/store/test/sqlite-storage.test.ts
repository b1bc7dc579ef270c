import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStorage } from '../src/index.js';
import { dmKey, inbound, queueTurn, roomKey } from './contract/fixtures.js';
import { runStorageContract } from './storage-contract.js';

const root = mkdtempSync(join(tmpdir(), 'swb-store-'));
let n = 0;
const freshFile = (): string => join(root, `db-${++n}`, 'switchboard.db');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const mode = (file: string): number => statSync(file).mode & 0o777;

runStorageContract('sqlite (temp file)', () => openSqliteStorage({ file: freshFile() }));
runStorageContract('sqlite (:memory:)', () => openSqliteStorage({ file: ':memory:' }));

describe('openSqliteStorage', () => {
  it('creates the database and its WAL files readable by the owner only', async () => {
    const file = freshFile();
    const s = openSqliteStorage({ file });
    await queueTurn(s, 'm1');
    expect(mode(file)).toBe(0o600);
    for (const side of [`${file}-wal`, `${file}-shm`]) {
      expect(existsSync(side)).toBe(true);
      expect(mode(side)).toBe(0o600);
    }
    s.close();
  });

  it('tightens the mode of an existing database file', () => {
    const file = join(root, 'loose.db');
    writeFileSync(file, '', { mode: 0o644 });
    expect(mode(file)).toBe(0o644);
    openSqliteStorage({ file }).close();
    expect(mode(file)).toBe(0o600);
  });

  it('turns on WAL, NORMAL sync, foreign keys and a busy timeout', () => {
    const file = freshFile();
    const s = openSqliteStorage({ file });
    expect(s.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(s.db.pragma('synchronous', { simple: true })).toBe(1);
    expect(s.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(s.db.pragma('busy_timeout', { simple: true })).toBe(5000);
    s.close();
    // WAL is a property of the file: a plain second connection sees it too.
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('keeps everything across close and reopen', async () => {
    const file = freshFile();
    const a = openSqliteStorage({ file });
    const ada = await a.principals.create({ name: 'ada', role: 'owner' });
    await a.principals.linkIdentity(ada.id, 'telegram', '1');
    await a.tokens.create({ kind: 'client', name: 'phone', principalId: ada.id, scopes: [], secretHash: 'h'.repeat(64) });
    const t = await queueTurn(a, 'm1');
    await a.turns.begin(t.turnId, [{ kind: 'user', turnId: t.turnId, payload: { text: 'hi' } }]);
    await a.sessions.append(t.sessionId, [{ kind: 'assistant', turnId: t.turnId, payload: { text: 'yo' } }]);
    const d = await a.deliveries.record({
      turnId: t.turnId,
      part: 0,
      kind: 'final',
      channel: 'websocket',
      account: 'default',
      conversationId: 'conv-1',
      platformMessageId: null,
      content: { text: 'yo' },
    });
    const before = { session: await a.sessions.get(t.sessionId), entries: await a.sessions.load(t.sessionId), turn: await a.turns.get(t.turnId) };
    a.close();
    a.close();

    const b = openSqliteStorage({ file });
    expect(await b.principals.byIdentity('telegram', '1')).toEqual(ada);
    expect((await b.tokens.byHash('h'.repeat(64)))?.name).toBe('phone');
    expect(await b.sessions.get(t.sessionId)).toEqual(before.session);
    expect(await b.sessions.load(t.sessionId)).toEqual(before.entries);
    expect(await b.turns.get(t.turnId)).toEqual(before.turn);
    expect(await b.turns.unfinished()).toEqual([before.turn]);
    expect((await b.sessions.resolve(dmKey('p1'))).id).toBe(t.sessionId);
    expect((await b.sessions.append(t.sessionId, [{ kind: 'note', turnId: null, payload: 1 }]))[0]?.seq).toBe(3);
    expect(await b.turns.accept(inbound('m1'), { key: dmKey('p1'), clientId: null })).toMatchObject({ duplicate: true, turnId: t.turnId });
    expect(await b.deliveries.record({ ...d.record })).toEqual({ record: d.record, existed: true });
    expect((await b.deliveries.record({ ...d.record, part: 1 })).record.id).toBeGreaterThan(d.record.id);
    b.close();
  });

  it('round-trips SQL-looking text harmlessly', async () => {
    const s = openSqliteStorage({ file: freshFile() });
    const evil = `'; DROP TABLE turns; --`;
    const p = await s.principals.create({ name: evil, role: 'guest' });
    expect((await s.principals.byName(evil))?.id).toBe(p.id);
    await s.principals.linkIdentity(p.id, evil, evil);
    expect((await s.principals.byIdentity(evil, evil))?.id).toBe(p.id);
    const key = roomKey(evil, `"); DELETE FROM sessions; --`);
    const r = await s.turns.accept(inbound(evil, { text: evil, channel: evil }), { key, clientId: evil });
    expect(r.duplicate).toBe(false);
    expect((await s.turns.accept(inbound(evil, { channel: evil }), { key, clientId: null })).duplicate).toBe(true);
    const sess = await s.sessions.resolve(key);
    expect(sess).toMatchObject({ id: r.sessionId, conversation: evil, thread: `"); DELETE FROM sessions; --` });
    await s.sessions.append(sess.id, [{ kind: 'note', turnId: evil, payload: { text: evil } }]);
    expect((await s.sessions.loadTurn(evil))[0]?.payload).toEqual({ text: evil });
    expect((await s.turns.inbox(r.inboxId))?.message.text).toBe(evil);
    expect((await s.turns.get(r.turnId ?? ''))?.clientId).toBe(evil);
    expect(await s.sessions.list({ channel: 'slack', principalId: evil })).toEqual([]);
    const tables = s.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all();
    expect(tables).toEqual(expect.arrayContaining(['turns', 'sessions', 'entries', 'inbox']));
    expect(s.db.prepare('SELECT count(*) FROM turns').pluck().get()).toBe(1);
    s.close();
  });

  it('two handles on one file share dedupe', async () => {
    const file = freshFile();
    const a = openSqliteStorage({ file });
    const b = openSqliteStorage({ file });
    const first = await a.turns.accept(inbound('x'), { key: dmKey('p1'), clientId: null });
    const second = await b.turns.accept(inbound('x'), { key: dmKey('p1'), clientId: null });
    expect(second).toEqual({ ...first, duplicate: true, sameText: true });
    a.close();
    b.close();
  });
});

describe('SQLite storage invariants', () => {
  it('append is all-or-nothing', async () => {
    const s = openSqliteStorage({ file: ':memory:' });
    const sess = await s.sessions.resolve(dmKey('p1'));
    const bad = { kind: null, turnId: null, payload: {} } as unknown as { kind: 'note'; turnId: null; payload: unknown };
    await expect(s.sessions.append(sess.id, [{ kind: 'user', turnId: null, payload: 1 }, bad])).rejects.toThrow();
    expect(await s.sessions.load(sess.id)).toEqual([]);
    expect((await s.sessions.get(sess.id))?.updatedAt).toEqual(sess.updatedAt);
    await expect(s.sessions.append('no-such-session', [{ kind: 'user', turnId: null, payload: 1 }])).rejects.toThrow();
    s.close();
  });

  it('begin rolls back the state change when the user entry cannot be stored', async () => {
    const s = openSqliteStorage({ file: ':memory:' });
    const t = await queueTurn(s, 'm1');
    const bad = { kind: null, turnId: t.turnId, payload: {} } as unknown as { kind: 'user'; turnId: string; payload: unknown };
    await expect(s.turns.begin(t.turnId, [bad])).rejects.toThrow();
    expect((await s.turns.get(t.turnId))?.state).toBe('queued');
    s.close();
  });

  it('rejects unknown turns and duplicate principal names', async () => {
    const s = openSqliteStorage({ file: ':memory:' });
    await expect(s.turns.begin('missing', [])).rejects.toThrow(/unknown turn/);
    await expect(s.turns.setState('missing', 'completed')).rejects.toThrow(/unknown turn/);
    await s.principals.create({ name: 'ada', role: 'owner' });
    await expect(s.principals.create({ name: 'ada', role: 'guest' })).rejects.toThrow(/UNIQUE/);
    await expect(s.principals.linkIdentity('no-such-principal', 'telegram', '1')).rejects.toThrow(/FOREIGN KEY/);
    expect(await s.principals.count()).toBe(1);
    s.close();
  });
});
