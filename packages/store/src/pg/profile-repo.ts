import type { Storage } from '@switchboard/core';
import type { PgDb } from './db.js';

import { notBuilt } from './scaffold.js';

// SCAFFOLD: replaced by the PostgreSQL implementation (issue 19).
export function pgProfileRepo(_db: PgDb): Storage['profiles'] {
  return notBuilt('pgProfileRepo');
}
export function pgInstructionFileRepo(_db: PgDb): Storage['instructionFiles'] {
  return notBuilt('pgInstructionFileRepo');
}
