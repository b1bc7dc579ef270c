import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A real PostgreSQL server for tests, started from Debian's `postgresql` binaries (`.ci/run`
 * installs them) or the folder `SWITCHBOARD_PG_BIN` names. As root, `initdb` and `postgres` run as
 * the `postgres` user (the server refuses uid 0), so the data directory is created under the
 * system temp folder and handed to that user.
 */
export interface PgServer {
  readonly port: number;
  readonly dataDir: string;
  /** The superuser's password (random per server): tests check that it never reaches a log. */
  readonly password: string;
  /** A connection URL for `database` (default `postgres`). */
  url(database?: string): string;
  /** Creates a fresh database (empty, or a copy of `template`, which must have no open connection) and returns its URL. */
  createDatabase(opts?: { name?: string; template?: string }): Promise<string>;
  /** Stops the server (fast shutdown: open connections are terminated). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it and deletes its data directory. */
  destroy(): Promise<void>;
}

function binDir(): string {
  const fromEnv = process.env.SWITCHBOARD_PG_BIN;
  if (fromEnv) return fromEnv;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error("no PostgreSQL binaries: install Debian's postgresql (.ci/run does) or set SWITCHBOARD_PG_BIN to a folder holding initdb and postgres");
  }
  return join(root, versions[0] as string, 'bin');
}

/** The uid/gid to run the server as: the `postgres` user when this process is root. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error("PostgreSQL refuses to run as root and there is no `postgres` user: install Debian's postgresql (it creates one)");
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Starts a fresh server (initdb, then postgres on a free loopback port). */
export async function startPostgres(): Promise<PgServer> {
  const bin = binDir();
  const user = runAs();
  const dataDir = mkdtempSync(join(tmpdir(), 'swb-pg-'));
  if (user) chownSync(dataDir, user.uid, user.gid);
  const password = randomBytes(12).toString('hex');
  const pwFile = join(dataDir, 'pw');
  writeFileSync(pwFile, password, { mode: 0o600 });
  if (user) chownSync(pwFile, user.uid, user.gid);
  const db = join(dataDir, 'db');
  const spawnOpts = { ...(user ?? {}), env: { ...process.env, LC_ALL: 'C' } };
  execFileSync(join(bin, 'initdb'), ['-D', db, '-U', 'postgres', `--pwfile=${pwFile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-locale', '--no-sync'], {
    ...spawnOpts,
    stdio: 'pipe',
  });
  rmSync(pwFile);
  const port = await freePort();
  let child: ChildProcess | null = null;

  const start = async (): Promise<void> => {
    if (child) return;
    const proc = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        db,
        '-p',
        String(port),
        '-k',
        dataDir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
      ],
      { ...spawnOpts, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child = proc;
    live.add(proc);
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer): void => {
        log += chunk.toString();
        if (log.includes('ready to accept connections')) {
          proc.stderr?.off('data', onData);
          proc.stderr?.resume();
          resolve();
        }
      };
      proc.stderr?.on('data', onData);
      proc.once('exit', (code) => reject(new Error(`postgres exited (${code}) before it was ready:\n${log.slice(-2000)}`)));
      proc.once('error', reject);
    });
    proc.once('exit', () => {
      live.delete(proc);
      if (child === proc) child = null;
    });
  };

  const stop = async (): Promise<void> => {
    const proc = child;
    if (!proc) return;
    child = null;
    await new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGINT');
    });
    live.delete(proc);
  };

  const url = (database = 'postgres'): string => `postgres://postgres:${password}@127.0.0.1:${port}/${database}`;
  await start();
  let n = 0;
  return {
    port,
    dataDir,
    password,
    url,
    async createDatabase(opts) {
      const dbName = opts?.name ?? `sb_${process.pid}_${++n}_${randomBytes(3).toString('hex')}`;
      const template = opts?.template ? ` TEMPLATE "${opts.template.replace(/"/g, '')}"` : '';
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${dbName.replace(/"/g, '')}"${template}`);
      } finally {
        await client.end();
      }
      return url(dbName);
    },
    stop,
    start,
    async destroy() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
