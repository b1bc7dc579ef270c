import { SwbError, SwbErrorCode } from '@switchboard/core';
import type { Sql } from './db.js';

// Leases on PostgreSQL (issue 20): a named row with an owner, an expiry and a fencing number.
// Time is the server's (`clock_timestamp()`), never a replica's clock, so replicas whose clocks
// disagree still agree on who holds what. The fencing number grows every time the lease changes
// hands; a write guarded by `fenced` fails once another owner took the lease, even if the old
// owner has not noticed yet.

/** The server's time in epoch milliseconds, as SQL. */
export const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** A held lease. */
export interface Lease {
  name: string;
  owner: string;
  /** Grows each time the lease changes hands: the token a fenced write presents. */
  fence: number;
  /** Server time (epoch ms) when it lapses unless renewed. */
  expiresAt: number;
}

/** What a fenced write, a renewal or a release presents of a held lease. */
export type LeaseToken = Pick<Lease, 'name' | 'owner' | 'fence'>;

/** One row of `leases`, as the control API shows it. */
export interface LeaseRow extends Lease {
  acquiredAt: number;
  /** Server time of the read: `expiresAt <= now` means nobody holds it. */
  now: number;
}

interface Row {
  name: string;
  owner: string;
  fence: number;
  expires_at: number;
  acquired_at: number;
  now: number;
}

const toLease = (r: Row): Lease => ({ name: r.name, owner: r.owner, fence: r.fence, expiresAt: r.expires_at });

/**
 * Takes `name` for `owner` for `ttlMs` unless another owner holds it unexpired. Re-acquiring one's
 * own lease extends it and keeps its fence; taking a lapsed one from another owner bumps the fence.
 * Null when someone else holds it.
 */
export async function acquireLease(q: Sql, name: string, owner: string, ttlMs: number): Promise<Lease | null> {
  const row = await q.row<Row>(
    `INSERT INTO leases (name, owner, fence, expires_at, acquired_at) VALUES ($1, $2, 1, ${NOW_MS} + $3, ${NOW_MS})
     ON CONFLICT (name) DO UPDATE SET
       fence = CASE WHEN leases.owner = excluded.owner AND leases.expires_at > ${NOW_MS} THEN leases.fence ELSE leases.fence + 1 END,
       acquired_at = CASE WHEN leases.owner = excluded.owner AND leases.expires_at > ${NOW_MS} THEN leases.acquired_at ELSE excluded.acquired_at END,
       owner = excluded.owner,
       expires_at = excluded.expires_at
     WHERE leases.expires_at <= ${NOW_MS} OR leases.owner = excluded.owner
     RETURNING name, owner, fence, expires_at, acquired_at, ${NOW_MS} AS now`,
    [name, owner, Math.max(1, Math.floor(ttlMs))],
  );
  return row ? toLease(row) : null;
}

/** Extends a held lease by `ttlMs` from now; null when it lapsed or changed hands (the holder must stop). */
export async function renewLease(q: Sql, lease: LeaseToken, ttlMs: number): Promise<Lease | null> {
  const row = await q.row<Row>(
    `UPDATE leases SET expires_at = ${NOW_MS} + $4
     WHERE name = $1 AND owner = $2 AND fence = $3 AND expires_at > ${NOW_MS}
     RETURNING name, owner, fence, expires_at, acquired_at, ${NOW_MS} AS now`,
    [lease.name, lease.owner, lease.fence, Math.max(1, Math.floor(ttlMs))],
  );
  return row ? toLease(row) : null;
}

/** Lets a held lease lapse now (graceful hand-off); the row and its fence stay. False when it was not held any more. */
export async function releaseLease(q: Sql, lease: LeaseToken): Promise<boolean> {
  return (
    (await q.run(`UPDATE leases SET expires_at = ${NOW_MS} WHERE name = $1 AND owner = $2 AND fence = $3 AND expires_at > ${NOW_MS}`, [
      lease.name,
      lease.owner,
      lease.fence,
    ])) > 0
  );
}

/**
 * Inside a write transaction: holds the lease row (FOR SHARE, so a concurrent take waits for this
 * transaction) and checks it is still this holder's. Throws {@link LeaseLostError} otherwise, which
 * rolls the write back.
 */
export async function fenced(q: Sql, lease: LeaseToken): Promise<void> {
  const ok = await q.row(`SELECT 1 FROM leases WHERE name = $1 AND owner = $2 AND fence = $3 AND expires_at > ${NOW_MS} FOR SHARE`, [
    lease.name,
    lease.owner,
    lease.fence,
  ]);
  if (!ok) throw new LeaseLostError(lease);
}

/** Every lease row whose name starts with `prefix` (the control API's view of who holds what). */
export async function listLeases(q: Sql, prefix = ''): Promise<LeaseRow[]> {
  const rows = await q.rows<Row>(`SELECT name, owner, fence, expires_at, acquired_at, ${NOW_MS} AS now FROM leases WHERE starts_with(name, $1) ORDER BY name`, [
    prefix,
  ]);
  return rows.map((r) => ({ ...toLease(r), acquiredAt: r.acquired_at, now: r.now }));
}

/** A fenced write found its lease taken by another owner (or lapsed). */
export class LeaseLostError extends SwbError {
  constructor(readonly lease: LeaseToken) {
    super(SwbErrorCode.LeaseLost, `lease ${lease.name} (fence ${lease.fence}) is no longer held by ${lease.owner}`);
    this.name = 'LeaseLostError';
  }
}
