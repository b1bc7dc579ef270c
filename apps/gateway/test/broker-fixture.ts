import pino from 'pino';
import { afterEach, beforeEach } from 'vitest';
import { ApprovalBroker } from '@switchboard/core';
import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';

/** A fresh in-memory store and approval broker for each test; read them through the getters. */
export function useBroker(): { readonly storage: SqliteStorage; readonly broker: ApprovalBroker } {
  let storage: SqliteStorage | undefined;
  let broker: ApprovalBroker | undefined;
  beforeEach(() => {
    storage = openSqliteStorage({ file: ':memory:' });
    broker = new ApprovalBroker({ storage, log: pino({ level: 'silent' }), timeoutMs: 60_000, selfApproveRoles: ['owner', 'admin', 'member'] });
  });
  afterEach(() => {
    broker?.close();
    storage?.close();
  });
  return {
    get storage() {
      return storage!;
    },
    get broker() {
      return broker!;
    },
  };
}
