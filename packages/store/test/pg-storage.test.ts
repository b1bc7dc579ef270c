import { type PgServer, startPostgres } from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStorage, scrubDatabaseUrl } from '../src/index.js';
import { runStorageContract } from './storage-contract.js';

// The storage contract on a real PostgreSQL server (Debian's binaries; see packages/testkit/src/postgres.ts).
// Each test gets its own database, copied from one migrated template.
let server: PgServer;
const TEMPLATE = 'sb_contract_template';

beforeAll(async () => {
  server = await startPostgres();
  const url = await server.createDatabase({ name: TEMPLATE });
  const s = await openPostgresStorage({ url });
  await s.close();
});
afterAll(async () => server?.destroy());

runStorageContract('postgres', async () => openPostgresStorage({ url: await server.createDatabase({ template: TEMPLATE }), max: 4 }));

describe('openPostgresStorage', () => {
  it('migrates an empty database once, even when several gateways start at once (advisory lock)', async () => {
    const url = await server.createDatabase();
    const opened = await Promise.all([1, 2, 3].map(() => openPostgresStorage({ url, max: 2 })));
    const [first] = opened;
    if (!first) throw new Error('no storage');
    const applied = await first.db.row<{ n: number }>('SELECT count(*) AS n FROM drizzle.__drizzle_migrations');
    expect(applied?.n).toBeGreaterThan(0);
    await first.principals.create({ name: 'ada', role: 'owner' });
    expect(await opened[2]?.principals.count()).toBe(1);
    await Promise.all(opened.map((s) => s.close()));
  });

  it('answers ping while the server is up, and a clear error without the password once the pool cannot connect', async () => {
    const url = await server.createDatabase();
    const s = await openPostgresStorage({ url, connectionTimeout: 1000 });
    expect(await s.ping()).toEqual({ ok: true });
    await s.close();
    const wrong = new URL(url);
    wrong.password = 'not-the-password';
    await expect(openPostgresStorage({ url: wrong.toString(), connectionTimeout: 1000 })).rejects.toThrow(/password authentication failed/);
    expect(scrubDatabaseUrl(url)).not.toContain(server.password);
    expect(scrubDatabaseUrl(url)).toContain('***');
  });

  it('stores U+0000, which PostgreSQL text cannot hold, as U+FFFD instead of failing the write', async () => {
    const s = await openPostgresStorage({ url: await server.createDatabase({ template: TEMPLATE }) });
    try {
      const p = await s.principals.create({ name: 'nul\u0000name', role: 'member' });
      expect(p.name).toBe('nul\u0000name');
      expect((await s.principals.get(p.id))?.name).toBe('nul\uFFFDname');
      const m = await s.memories.save({ scope: 'private', principalId: p.id, text: 'coffee\u0000beans', tags: ['a\u0000b'], createdBy: p.id });
      expect((await s.memories.get(m.id))?.text).toBe('coffee\uFFFDbeans');
      expect((await s.memories.search({ text: 'beans', scopes: [{ scope: 'private', principalId: p.id }], limit: 5 })).map((h) => h.memory.id)).toEqual([m.id]);
    } finally {
      await s.close();
    }
  });
});
