import type { FailureBegin, SharedCounters } from '@switchboard/core';
import type { PgDb } from './db.js';

// Every operation is one INSERT … ON CONFLICT DO UPDATE (or UPDATE/DELETE) statement: the row lock
// it takes serialises concurrent callers, and under READ COMMITTED the waiting one re-evaluates its
// SET expressions on the row as the first one left it, so no replica reads a stale count.

/** Tokens in bucket `b` at $4 (epoch ms), refilled since `b.at`, capped at the burst ($2). */
const REFILLED = 'LEAST($2::float8, b.tokens + GREATEST(0, $4::bigint - b.at)::float8 / 60000 * $3::float8)';

const TAKE = `
INSERT INTO rate_buckets AS b (key, tokens, at, warned, outcome, full_at)
VALUES ($1, $2::float8 - 1, $4::bigint, false, 'ok', $4::bigint + ceil(60000 / $3::float8)::bigint)
ON CONFLICT (key) DO UPDATE SET
  tokens = CASE
    WHEN $5::boolean THEN GREATEST(-$2::float8, ${REFILLED} - 1)
    WHEN ${REFILLED} >= 1 THEN ${REFILLED} - 1
    ELSE ${REFILLED} END,
  warned = CASE
    WHEN $5::boolean THEN b.warned
    WHEN ${REFILLED} >= $2::float8 THEN false
    WHEN ${REFILLED} >= 1 THEN b.warned
    ELSE true END,
  outcome = CASE
    WHEN $5::boolean OR ${REFILLED} >= 1 THEN 'ok'
    WHEN b.warned THEN 'limited'
    ELSE 'limited_warn' END,
  at = GREATEST(b.at, $4::bigint),
  full_at = GREATEST(b.at, $4::bigint) + ceil(($2::float8 - CASE
    WHEN $5::boolean THEN GREATEST(-$2::float8, ${REFILLED} - 1)
    WHEN ${REFILLED} >= 1 THEN ${REFILLED} - 1
    ELSE ${REFILLED} END) * 60000 / $3::float8)::bigint
RETURNING outcome`;

/** The failures (`FAIL`) and attempts in flight (`PEND`) of row `a` still inside the window ending at $2. */
const FAIL = 'ARRAY(SELECT x FROM unnest(a.failures) AS x WHERE x > $2::bigint - $3::bigint ORDER BY x)';
const PEND = 'ARRAY(SELECT x FROM unnest(a.pending) AS x WHERE x > $2::bigint - $3::bigint ORDER BY x)';
const ADMIT = `(a.locked_until <= $2::bigint AND cardinality(${FAIL}) + cardinality(${PEND}) < $4::int)`;

// $1 key, $2 now, $3 window, $4 maxFailures.
const BEGIN = `
INSERT INTO auth_failures AS a (key, failures, pending, locked_until, outcome, expires_at)
VALUES ($1, '{}', ARRAY[$2::bigint], 0, 'admitted', $2::bigint + $3::bigint)
ON CONFLICT (key) DO UPDATE SET
  failures = ${FAIL},
  pending = CASE WHEN ${ADMIT} THEN ${PEND} || $2::bigint ELSE ${PEND} END,
  outcome = CASE
    WHEN a.locked_until > $2::bigint THEN 'locked'
    WHEN ${ADMIT} THEN 'admitted'
    ELSE 'busy' END,
  expires_at = GREATEST(a.expires_at, a.locked_until, $2::bigint + $3::bigint)
RETURNING outcome, locked_until`;

/** Row `a`'s in-flight attempts without one occurrence of $5 (the settled attempt). */
const UNPEND = `CASE WHEN array_position(a.pending, $5::bigint) IS NULL THEN a.pending
  ELSE a.pending[:array_position(a.pending, $5::bigint) - 1] || a.pending[array_position(a.pending, $5::bigint) + 1:] END`;
/** Whether settling as a failure reaches the limit ($4). */
const LOCKS = `(NOT $6::boolean AND cardinality(${FAIL}) + 1 >= $4::int)`;

// $1 key, $2 now, $3 window, $4 maxFailures, $5 the attempt's time, $6 ok, $7 lockout.
const SETTLE = `
INSERT INTO auth_failures AS a (key, failures, pending, locked_until, outcome, expires_at)
VALUES (
  $1,
  CASE WHEN $6::boolean OR $4::int <= 1 THEN '{}'::bigint[] ELSE ARRAY[$2::bigint] END,
  '{}',
  CASE WHEN NOT $6::boolean AND $4::int <= 1 THEN $2::bigint + $7::bigint ELSE 0 END,
  CASE WHEN NOT $6::boolean AND $4::int <= 1 THEN 'lockout' ELSE 'settled' END,
  $2::bigint + GREATEST($3::bigint, $7::bigint))
ON CONFLICT (key) DO UPDATE SET
  pending = ${UNPEND},
  failures = CASE WHEN $6::boolean THEN a.failures WHEN ${LOCKS} THEN '{}'::bigint[] ELSE ${FAIL} || $2::bigint END,
  locked_until = CASE WHEN ${LOCKS} THEN $2::bigint + $7::bigint ELSE a.locked_until END,
  outcome = CASE WHEN ${LOCKS} THEN 'lockout' ELSE 'settled' END,
  expires_at = GREATEST(a.expires_at, $2::bigint + $3::bigint, CASE WHEN ${LOCKS} THEN $2::bigint + $7::bigint ELSE 0 END)
RETURNING outcome`;

/** {@link SharedCounters} on PostgreSQL: the `rate_buckets` and `auth_failures` tables. */
export function pgSharedCounters(db: PgDb): SharedCounters {
  return {
    async take(key, limit, now, opts = {}) {
      const r = await db.row<{ outcome: string }>(TAKE, [key, limit.burst, limit.perMinute, Math.floor(now), opts.force === true]);
      const outcome = r?.outcome ?? 'ok';
      return { ok: outcome === 'ok', warn: outcome === 'limited_warn' };
    },
    async beginAttempt(key, limits, now): Promise<FailureBegin> {
      const t = Math.floor(now);
      const r = await db.row<{ outcome: string; locked_until: number }>(BEGIN, [key, t, limits.windowMs, limits.maxFailures]);
      if (r?.outcome === 'locked') return { outcome: 'locked', lockedUntil: r.locked_until };
      if (r?.outcome === 'busy') return { outcome: 'busy' };
      return { outcome: 'admitted', at: t };
    },
    async settleAttempt(key, at, ok, limits, now) {
      const r = await db.row<{ outcome: string }>(SETTLE, [key, Math.floor(now), limits.windowMs, limits.maxFailures, at, ok, limits.lockoutMs]);
      return r?.outcome === 'lockout';
    },
    async lockedUntil(key, now) {
      const r = await db.row<{ locked_until: number }>('SELECT locked_until FROM auth_failures WHERE key = $1 AND locked_until > $2', [key, Math.floor(now)]);
      return r ? r.locked_until : null;
    },
    async sweep(now) {
      const t = Math.floor(now);
      const buckets = await db.run('DELETE FROM rate_buckets WHERE full_at <= $1', [t]);
      const failures = await db.run('DELETE FROM auth_failures WHERE expires_at <= $1', [t]);
      return buckets + failures;
    },
  };
}
