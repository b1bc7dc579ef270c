import type { NewUsageRecord, Storage, UsageRecord } from '@switchboard/core';
import { type ChangeRow, type SpendRow, type SumRow, TOKENS, usageChanges, usageRecordOf, usageReport, usageRowOf, usageSpend } from '../usage-repo.js';
import { lockCursor, type PgDb, type Sql } from './db.js';

/** The usage table's insert, for use inside a turn's transactions (its flushes and its end). */
export interface PgUsageOps {
  record(q: Sql, r: NewUsageRecord): Promise<UsageRecord>;
}

/** The in-transaction usage insert. */
export function pgUsageOps(): PgUsageOps {
  return {
    async record(q, r) {
      // `changes` reads by rowid: rowids must become visible in rowid order (see lockCursor).
      await lockCursor(q, 'usage');
      const row = usageRowOf(r);
      await q.run(
        `INSERT INTO usage (id, created_at, turn_id, session_id, principal_id, agent_id, channel, model, input_tokens, output_tokens,
           cache_read_input_tokens, cache_creation_input_tokens, context_tokens, cost_usd)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [
          row.id,
          row.created_at,
          row.turn_id,
          row.session_id,
          row.principal_id,
          row.agent_id,
          row.channel,
          row.model,
          row.input_tokens,
          row.output_tokens,
          row.cache_read_input_tokens,
          row.cache_creation_input_tokens,
          row.context_tokens,
          row.cost_usd,
        ],
      );
      return usageRecordOf(r, row);
    },
  };
}

// One indexed range read per scope: principal_id / agent_id lead their (id, created_at) indexes.
const spendSql = (where: string) =>
  `SELECT coalesce(sum(CASE WHEN created_at >= $2 THEN ${TOKENS} END), 0) AS day_tokens,
     coalesce(sum(CASE WHEN created_at >= $2 THEN cost_usd END), 0) AS day_usd,
     coalesce(sum(${TOKENS}), 0) AS month_tokens, coalesce(sum(cost_usd), 0) AS month_usd
   FROM usage WHERE ${where} created_at >= least($2::bigint, $3::bigint) AND ($4::bigint IS NULL OR rowid <= $4)`;
const SPEND_OF_PRINCIPAL = spendSql('principal_id = $1 AND');
const SPEND_OF_AGENT = spendSql('agent_id = $1 AND');
// Every statement names $1 (PostgreSQL rejects a parameter it cannot type); unscoped, it is null.
const SPEND_OF_ALL = spendSql('$1::text IS NULL AND');

/** The usage table (one row per completed model call) over a PostgreSQL pool. */
export function pgUsageRepo(db: PgDb, ops: PgUsageOps = pgUsageOps()): Storage['usage'] {
  return {
    async record(r) {
      return db.tx((q) => ops.record(q, r));
    },
    async changes(afterSeq, limit = 10_000) {
      if (afterSeq === null) return { rows: [], last: (await db.row<{ seq: number }>('SELECT coalesce(max(rowid), 0) AS seq FROM usage'))?.seq ?? 0 };
      // The table has no deletes and its inserts are ordered by lockCursor, so rowid is a monotonic insertion sequence.
      const rows = await db.rows<ChangeRow>(
        `SELECT rowid AS seq, created_at, principal_id, agent_id, ${TOKENS} AS tokens, cost_usd FROM usage WHERE rowid > $1 ORDER BY rowid LIMIT $2`,
        [afterSeq, limit],
      );
      return usageChanges(rows, afterSeq);
    },
    async spend(filter, since, throughSeq) {
      const sql = filter.principalId !== undefined ? SPEND_OF_PRINCIPAL : filter.agentId !== undefined ? SPEND_OF_AGENT : SPEND_OF_ALL;
      const row = await db.row<SpendRow>(sql, [filter.principalId ?? filter.agentId ?? null, since.day.getTime(), since.month.getTime(), throughSeq ?? null]);
      return usageSpend(row);
    },
    async report(filter = {}) {
      const rows = await db.rows<SumRow>(
        `SELECT to_char(to_timestamp(created_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(input_tokens) AS input,
           sum(output_tokens) AS output, sum(cache_read_input_tokens) AS cache_read, sum(cache_creation_input_tokens) AS cache_write,
           sum(cost_usd) AS cost, count(*) AS calls
         FROM usage
         WHERE ($1::text IS NULL OR principal_id = $1) AND ($2::text IS NULL OR agent_id = $2)
           AND ($3::text IS NULL OR channel = $3) AND ($4::text IS NULL OR model = $4)
           AND ($5::bigint IS NULL OR created_at >= $5) AND ($6::bigint IS NULL OR created_at < $6)
         GROUP BY day ORDER BY day`,
        [
          filter.principalId ?? null,
          filter.agentId ?? null,
          filter.channel ?? null,
          filter.model ?? null,
          filter.from ? filter.from.getTime() : null,
          filter.before ? filter.before.getTime() : null,
        ],
      );
      return usageReport(rows);
    },
  };
}
