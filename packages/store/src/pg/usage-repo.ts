import type { NewUsageRecord, Storage, UsageRecord } from '@switchboard/core';
import type { PgDb, Sql } from './db.js';

import { notBuilt } from './scaffold.js';

// SCAFFOLD: replaced by the PostgreSQL implementation (issue 19).
export interface PgUsageOps {
  record(q: Sql, r: NewUsageRecord): Promise<UsageRecord>;
}
export function pgUsageOps(): PgUsageOps {
  return notBuilt('pgUsageOps');
}
export function pgUsageRepo(_db: PgDb, _ops: PgUsageOps): Storage['usage'] {
  return notBuilt('pgUsageRepo');
}
