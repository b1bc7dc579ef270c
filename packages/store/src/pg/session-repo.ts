import type { Entry, NewEntry, SessionKey, Storage } from '@switchboard/core';
import type { SessionRow } from '../rows.js';
import type { PgDb, Sql } from './db.js';

import { notBuilt } from './scaffold.js';

// SCAFFOLD: replaced by the PostgreSQL implementation (issue 19).
/** Session operations that run inside a caller's transaction (`q`); none opens one itself. */
export interface PgSessionOps {
  resolve(q: Sql, key: SessionKey): Promise<SessionRow>;
  append(q: Sql, sessionId: string, entries: readonly NewEntry[]): Promise<Entry[]>;
}
export function pgSessionOps(): PgSessionOps {
  return notBuilt('pgSessionOps');
}
export function pgSessionRepo(_db: PgDb, _ops: PgSessionOps): Storage['sessions'] {
  return notBuilt('pgSessionRepo');
}
