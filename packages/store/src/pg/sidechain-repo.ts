import type { Storage } from '@switchboard/core';
import type { PgDb } from './db.js';

import { notBuilt } from './scaffold.js';

// SCAFFOLD: replaced by the PostgreSQL implementation (issue 19).
export function pgSidechainRepo(_db: PgDb): Storage['sidechains'] {
  return notBuilt('pgSidechainRepo');
}
