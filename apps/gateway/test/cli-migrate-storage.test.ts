import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStorage } from '@switchboard/store';
import { type PgServer, startPostgres } from '@switchboard/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateStorageCommand, storageUrlOf } from '../src/cli-migrate-storage.js';
import { ConfigError } from '../src/config.js';
import { acquireInstanceLock } from '../src/instance-lock.js';

// The command's decisions (flags, target URL, lock, messages) against a real PostgreSQL server;
// the whole flow through the gateway process is test/migrate-storage.e2e.test.ts.
let server: PgServer;
let root: string;
let n = 0;

beforeAll(async () => {
  server = await startPostgres();
  root = mkdtempSync(join(tmpdir(), 'swb-cli-migrate-'));
});
afterAll(async () => {
  await server?.destroy();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** A data dir with a SQLite database holding one principal, and a config naming it (plus `storage`). */
async function gatewayDir(storage?: unknown): Promise<{ dataDir: string; config: string }> {
  const dataDir = join(root, `data-${++n}`);
  const s = openSqliteStorage({ file: join(dataDir, 'switchboard.db') });
  await s.principals.create({ name: 'ada', role: 'owner' });
  s.close();
  const config = join(root, `config-${n}.json5`);
  writeFileSync(config, JSON.stringify({ gateway: { dataDir }, ...(storage ? { storage } : {}) }));
  return { dataDir, config };
}

const run = async (flags: { from?: string; to?: string; url?: string }, config: string, env: NodeJS.ProcessEnv = {}) => {
  const progress: string[] = [];
  const out = await migrateStorageCommand(flags, config, env, root, (l) => progress.push(l));
  return { ...out, progress };
};

describe('switchboard migrate-storage', () => {
  it('refuses any pair but sqlite → postgres, with the flags to pass (exit 2)', async () => {
    const { config } = await gatewayDir();
    for (const flags of [{}, { from: 'postgres', to: 'sqlite' }, { from: 'sqlite', to: 'mysql' }]) {
      const out = await run(flags, config);
      expect(out.code).toBe(2);
      expect(out.stderr).toMatch(/pass --from sqlite --to postgres/);
    }
  });

  it('takes the target from --url, else storage.url (with ${VAR}), else DATABASE_URL; none is exit 2', async () => {
    const none = await gatewayDir();
    expect(await run({ from: 'sqlite', to: 'postgres' }, none.config)).toMatchObject({ code: 2, stderr: expect.stringMatching(/no target database/) });
    expect((await run({ from: 'sqlite', to: 'postgres', url: 'mysql://x@y/z' }, none.config)).code).toBe(2);

    const viaConfig = await gatewayDir({ kind: 'sqlite', url: '${PG_TARGET}' });
    const url = await server.createDatabase();
    const out = await run({ from: 'sqlite', to: 'postgres' }, viaConfig.config, { PG_TARGET: url });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^principals\s+1 {2}sha256:[0-9a-f]{64}$/m);
    expect(out.stdout).toMatch(/every count and checksum matched/);
    expect(out.stdout).toMatch(/next: set storage.kind to "postgres"/);
    expect(out.progress.some((l) => /^copied principals: 1 row\(s\) \[1\/\d+\]$/.test(l))).toBe(true);
    for (const text of [out.stdout, ...out.progress]) expect(text).not.toContain(server.password);

    const viaEnv = await gatewayDir();
    const second = await run({ from: 'sqlite', to: 'postgres' }, viaEnv.config, { DATABASE_URL: await server.createDatabase() });
    expect(second.code, second.stderr).toBe(0);
  });

  it('refuses while a gateway holds the data dir (exit 75), and writes nothing', async () => {
    const { dataDir, config } = await gatewayDir();
    const url = await server.createDatabase();
    const lock = acquireInstanceLock(dataDir, { host: '127.0.0.1', port: 7420 });
    try {
      const out = await run({ from: 'sqlite', to: 'postgres', url }, config);
      expect(out.code).toBe(75);
      expect(out.stderr).toMatch(/already running on the data dir .*stop it first/);
    } finally {
      lock.release();
    }
    expect((await run({ from: 'sqlite', to: 'postgres', url }, config)).code).toBe(0);
  });

  it('never prints the password: not in a refusal, not in a server error (exit 1)', async () => {
    const { config } = await gatewayDir();
    const url = new URL(await server.createDatabase());
    url.password = 'p@ss word/secret';
    const out = await run({ from: 'sqlite', to: 'postgres', url: url.toString() }, config);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/password authentication failed/);
    for (const text of [out.stderr ?? '', ...out.progress]) {
      expect(text).not.toContain('p@ss word/secret');
      expect(text).not.toContain(encodeURIComponent('p@ss word/secret'));
      expect(text).not.toContain(url.password);
    }
    expect(out.progress.join('\n')).toContain(':***@');
  });

  it('an unreadable config is exit 78 naming the file', async () => {
    const missing = join(root, 'no-such-config.json5');
    for (const env of [{}, { DATABASE_URL: 'postgres://u:pw-secret@h/db' }]) {
      const out = await run({ from: 'sqlite', to: 'postgres' }, missing, env);
      expect(out.code).toBe(78);
      expect(out.stderr).toBe(`switchboard: cannot read the config file ${missing}: ENOENT\n(config file: ${missing})\n`);
    }
  });

  it('a missing database file is exit 1 naming it', async () => {
    const config = join(root, 'empty.json5');
    writeFileSync(config, JSON.stringify({ gateway: { dataDir: join(root, 'nothing-here') } }));
    const out = await run({ from: 'sqlite', to: 'postgres', url: server.url() }, config);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/no SQLite database at .*nothing-here\/switchboard.db/);
  });

  it('reads storage.url from any config shape: a string, or a ConfigError naming the key (never another error)', () => {
    const file = join(root, 'hostile.json5');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue(),
          fc.record({ storage: fc.oneof(fc.jsonValue(), fc.record({ url: fc.jsonValue() }), fc.constant({ ['__proto__']: { url: 'x' } })) }),
        ),
        (config) => {
          writeFileSync(file, JSON.stringify(config));
          try {
            expect(typeof storageUrlOf(file, { V: 'v' })).toBe('string');
          } catch (err) {
            expect(err).toBeInstanceOf(ConfigError);
            expect((err as Error).message).toMatch(/storage\.url|\$\{|environment variable/);
          }
        },
      ),
      { numRuns: 200 },
    );
    writeFileSync(file, JSON.stringify({ storage: { url: 'postgres://u:${PW}@h/db' } }));
    expect(storageUrlOf(file, { PW: 'pw' })).toBe('postgres://u:pw@h/db');
    expect(() => storageUrlOf(file, {})).toThrow(/storage\.url: environment variable PW is not set/);
  });
});
