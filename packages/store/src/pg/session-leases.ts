import type { SessionLeaseStore } from '@switchboard/core';
import { UNFINISHED } from '../turn-repo.js';
import type { Sql } from './db.js';
import { acquireLease, NOW_MS, releaseLease, renewLease } from './leases.js';

/** The lease name of a session's lane. */
export const sessionLeaseName = (sessionId: string): string => `session:${sessionId}`;

const toFence = (l: { name: string; owner: string; fence: number }) => ({ name: l.name, owner: l.owner, fence: l.fence });

/** Session leases over the `leases` table (see `SessionLeaseStore`; docs/adr/0010-replica-session-leases.md). */
export function pgSessionLeases(q: Sql): SessionLeaseStore {
  return {
    async acquire(sessionId, owner, ttlMs) {
      const lease = await acquireLease(q, sessionLeaseName(sessionId), owner, ttlMs);
      return lease ? toFence(lease) : null;
    },
    async renew(lease, ttlMs) {
      const next = await renewLease(q, lease, ttlMs);
      return next ? toFence(next) : null;
    },
    async release(lease) {
      await releaseLease(q, lease);
    },
    async orphans(queuedForMs, owner) {
      // A queued turn is its accepting replica's to run; it is an orphan only once it waited a whole
      // lease. A live lease of `owner`'s was held by a previous process of this replica: it is free.
      const rows = await q.rows<{ session_id: string }>(
        `SELECT DISTINCT t.session_id FROM turns t
         LEFT JOIN leases l ON l.name = 'session:' || t.session_id AND l.expires_at > ${NOW_MS}
         WHERE t.state IN ${UNFINISHED} AND (l.name IS NULL OR l.owner = $2)
           AND (t.state <> 'queued' OR t.created_at <= $1 OR l.owner = $2)`,
        [Date.now() - Math.max(0, Math.floor(queuedForMs)), owner],
      );
      return rows.map((r) => r.session_id);
    },
  };
}
