import type { LedgerWrite, NewDelivery, Storage } from '@switchboard/core';
import type { PgDb, Sql } from './db.js';

import { notBuilt } from './scaffold.js';

// SCAFFOLD: replaced by the PostgreSQL implementation (issue 19).
export interface PgDeliveryOps {
  record(q: Sql, d: NewDelivery): Promise<LedgerWrite>;
}
export function pgDeliveryOps(): PgDeliveryOps {
  return notBuilt('pgDeliveryOps');
}
export function pgDeliveryRepo(_db: PgDb, _ops: PgDeliveryOps): Storage['deliveries'] {
  return notBuilt('pgDeliveryRepo');
}
