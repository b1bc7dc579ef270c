import { join } from 'node:path';
import type { Storage } from '@switchboard/core';
import { openSqliteStorage } from '@switchboard/store';
import type { Config } from '../config.js';
import { acquireInstanceLock, type InstanceLock } from '../instance-lock.js';
import { prepareDataDir } from '../startup-errors.js';

/**
 * Start-up step: the data dir is usable and no other gateway holds it. Runs before anything is
 * written to the data dir; the lock records the configured listen address until the listen
 * succeeded ({@link InstanceLock.update}).
 */
export function openDataDir(gateway: Readonly<Config['gateway']>): InstanceLock {
  prepareDataDir(gateway.dataDir);
  return acquireInstanceLock(gateway.dataDir, { host: gateway.host, port: gateway.port });
}

/** The opened database and its file (the policy protects the file from the file tools). */
export interface OpenedStorage {
  storage: Storage;
  databaseFile: string;
}

/** Start-up step: opens (and migrates) the SQLite database `<dataDir>/switchboard.db`. */
export function openStorage(dataDir: string): OpenedStorage {
  const databaseFile = join(dataDir, 'switchboard.db');
  return { storage: openSqliteStorage({ file: databaseFile }), databaseFile };
}
