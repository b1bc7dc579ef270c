import { readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { SwbError, SwbErrorCode } from '@switchboard/core';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { writePrivateFile } from './bootstrap.js';

/**
 * One gateway per data dir. Node has no `flock`, so the lock is SQLite's own: `<dataDir>/instance.lock`
 * is an (empty) SQLite database held with `locking_mode=EXCLUSIVE` and an open `BEGIN EXCLUSIVE`
 * for the life of the process. The lock is a POSIX record lock, so the kernel drops it when the
 * process ends however it ends (SIGKILL included): no stale lock, and never a pid-liveness check
 * (a restarted container gets the same pid). The lock file is never deleted (deleting a lock
 * file another process may be opening would let two processes lock two different files).
 *
 * A file locked exclusively cannot be read by anyone else, so who holds it is recorded in a
 * sidecar, `<dataDir>/instance.json` (pid, host, port, start time), written once the lock is held
 * and removed on release. It is only for messages: the lock alone decides.
 */

/** The lock file's name inside the data dir. */
export const INSTANCE_LOCK_FILE = 'instance.lock';
/** The sidecar naming the holder, inside the data dir. */
export const INSTANCE_INFO_FILE = 'instance.json';

const instanceInfoSchema = z.object({
  pid: z.number().int(),
  hostname: z.string(),
  host: z.string(),
  port: z.number().int(),
  startedAt: z.string(),
});

/** Who holds a data dir's lock, from `instance.json` (for messages only). */
export type InstanceInfo = z.output<typeof instanceInfoSchema>;

/** The answer of {@link probeInstanceLock}. */
export interface InstanceProbe {
  /** True when a process holds the data dir's lock (a gateway is running on it). */
  running: boolean;
  /** The holder's sidecar, when running and the sidecar is readable. */
  info?: InstanceInfo;
}

/** A held lock. */
export interface InstanceLock {
  readonly dataDir: string;
  /** Records the listen address in the sidecar (the port is known only after the listen). */
  update(fields: Pick<InstanceInfo, 'host' | 'port'>): void;
  /** Removes the sidecar and releases the lock (also released by the kernel when the process ends). */
  release(): void;
}

/** Another process holds the data dir's lock; `info` names it when its sidecar is readable. */
export class InstanceLockedError extends SwbError {
  constructor(
    readonly dataDir: string,
    readonly info: InstanceInfo | undefined,
  ) {
    super(SwbErrorCode.InstanceLocked, `another Switchboard gateway is already running on the data dir ${dataDir}: ${describeInstance(info)}`);
    this.name = 'InstanceLockedError';
  }
}

/** "pid 123 on host (127.0.0.1:7420), since …", or a fallback when the sidecar is unreadable. */
export function describeInstance(info: InstanceInfo | undefined): string {
  if (!info) return `its details are not recorded yet (${INSTANCE_INFO_FILE} is missing or unreadable)`;
  const host = info.host.includes(':') ? `[${info.host}]` : info.host;
  return `pid ${info.pid} on ${info.hostname}, listening on ${host}:${info.port}, since ${info.startedAt}`;
}

function readInfo(dataDir: string): InstanceInfo | undefined {
  try {
    const parsed = instanceInfoSchema.safeParse(JSON.parse(readFileSync(join(dataDir, INSTANCE_INFO_FILE), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const isBusy = (err: unknown) => typeof err === 'object' && err !== null && /^SQLITE_(BUSY|LOCKED)/.test(String((err as { code?: unknown }).code));

/**
 * Takes the data dir's lock for the life of this process, then writes the sidecar. The data dir
 * must exist. Throws {@link InstanceLockedError} when another process holds it; other errors
 * (an unwritable directory) are thrown as they are. `host`/`port` are the configured ones,
 * updated with {@link InstanceLock.update} once listening.
 */
export function acquireInstanceLock(dataDir: string, listen: Pick<InstanceInfo, 'host' | 'port'> = { host: '', port: 0 }): InstanceLock {
  // A short busy wait rides out a probe's momentary shared lock; a real holder never lets go.
  const db = new Database(join(dataDir, INSTANCE_LOCK_FILE), { timeout: 250 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if (isBusy(err)) throw new InstanceLockedError(dataDir, readInfo(dataDir));
    throw err;
  }
  let info: InstanceInfo = { pid: process.pid, hostname: hostname(), host: listen.host, port: listen.port, startedAt: new Date().toISOString() };
  const write = () => writePrivateFile(join(dataDir, INSTANCE_INFO_FILE), `${JSON.stringify(info)}\n`);
  let held = true;
  try {
    write();
  } catch (err) {
    db.close();
    throw err;
  }
  return {
    dataDir,
    update(fields) {
      if (!held) return;
      info = { ...info, ...fields };
      write();
    },
    release() {
      if (!held) return;
      held = false;
      rmSync(join(dataDir, INSTANCE_INFO_FILE), { force: true });
      db.close();
    },
  };
}

/**
 * Whether a gateway holds the data dir's lock, without taking it: a read of the lock file fails
 * only while another process holds it exclusively. `info` is the holder's sidecar. Safe to call
 * while a gateway runs or starts (the read lasts microseconds; {@link acquireInstanceLock} waits
 * out such a read). A data dir that does not exist, or was never locked, is not running.
 */
export function probeInstanceLock(dataDir: string): InstanceProbe {
  let db: Database.Database;
  try {
    db = new Database(join(dataDir, INSTANCE_LOCK_FILE), { readonly: true, fileMustExist: true, timeout: 0 });
  } catch {
    return { running: false };
  }
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return { running: false };
  } catch (err) {
    if (!isBusy(err)) throw err;
    const info = readInfo(dataDir);
    return info ? { running: true, info } : { running: true };
  } finally {
    db.close();
  }
}
