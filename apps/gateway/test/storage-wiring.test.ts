import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { configSecrets } from '../src/config.js';
import { scrubber } from '../src/logger.js';
import { StartupError } from '../src/startup-errors.js';
import { openStorage } from '../src/wiring/storage.js';
import { parseTestConfig } from './config-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'swb-storage-wiring-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openStorage', () => {
  it('sqlite: the file in the data dir, which the policy protects', async () => {
    const cfg = parseTestConfig(JSON.stringify({ gateway: { dataDir: dir } }));
    const opened = await openStorage(cfg, pino({ level: 'silent' }), (s) => s);
    expect(opened.storage.engine).toBe('sqlite');
    expect(opened.databaseFile).toBe(join(dir, 'switchboard.db'));
    expect(await opened.storage.ping()).toEqual({ ok: true });
    await opened.storage.close();
  });

  it('postgres: an unreachable server is a start-up error naming storage.url with the reason, never the password', async () => {
    const password = 'Pw-canary-7731';
    const cfg = parseTestConfig(
      JSON.stringify({ gateway: { dataDir: dir }, storage: { kind: 'postgres', url: `postgres://sb:${password}@127.0.0.1:1/sb`, connectionTimeout: '1s' } }),
    );
    const err = await openStorage(cfg, pino({ level: 'silent' }), scrubber(configSecrets(cfg))).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StartupError);
    expect((err as StartupError).key).toBe('storage.url');
    expect((err as StartupError).exitCode).toBe(78);
    expect((err as Error).message).toMatch(/^storage\.url: cannot open the PostgreSQL database at postgres:\/\/sb:\*\*\*@127\.0\.0\.1:1\/sb: .*ECONNREFUSED/);
    expect((err as Error).message).not.toContain(password);
  });
});
