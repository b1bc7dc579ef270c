import type { Storage } from '@switchboard/core';
import type { PgDb } from './db.js';
import type { PgDeliveryOps } from './delivery-repo.js';
import type { PgSessionOps } from './session-repo.js';
import type { PgUsageOps } from './usage-repo.js';

import { notBuilt } from './scaffold.js';

// SCAFFOLD: replaced by the PostgreSQL implementation (issue 19).
export function pgTurnRepo(_db: PgDb, _s: PgSessionOps, _d: PgDeliveryOps, _u: PgUsageOps): Storage['turns'] {
  return notBuilt('pgTurnRepo');
}
