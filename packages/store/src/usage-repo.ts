import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { NewUsageRecord, Storage, UsageRecord, UsageTotals } from '@switchboard/core';

/** A `usage` row (both engines). */
export interface UsageRow {
  id: string;
  created_at: number;
  turn_id: string;
  session_id: string;
  principal_id: string | null;
  agent_id: string;
  channel: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  context_tokens: number;
  cost_usd: number;
}

/** One day of {@link usageReport}'s input. */
export interface SumRow {
  day: string;
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  cost: number;
  calls: number;
}

interface FilterParams {
  principal: string | null;
  agent: string | null;
  channel: string | null;
  model: string | null;
  from: number | null;
  before: number | null;
}

interface SpendParams {
  id: string | null;
  day: number;
  month: number;
  through: number | null;
}

/** A row of `usage.changes`, as the query selects it. */
export interface ChangeRow {
  seq: number;
  created_at: number;
  principal_id: string | null;
  agent_id: string;
  tokens: number;
  cost_usd: number;
}

/** The `usage.spend` query's one row. */
export interface SpendRow {
  day_tokens: number;
  day_usd: number;
  month_tokens: number;
  month_usd: number;
}

/** Tokens as budgets count them. */
export const TOKENS = 'input_tokens + output_tokens + cache_read_input_tokens + cache_creation_input_tokens';

const zero = (): UsageTotals => ({ inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUsd: 0, calls: 0 });

// Rounded to a billionth of a dollar: sums of float costs must not show drift in the last digits.
/** A dollar sum rounded to a billionth. */
export const roundUsd = (usd: number): number => Math.round(usd * 1e9) / 1e9;

const totalsOf = (r: SumRow): UsageTotals => ({
  inputTokens: r.input,
  outputTokens: r.output,
  cacheReadInputTokens: r.cache_read,
  cacheCreationInputTokens: r.cache_write,
  costUsd: roundUsd(r.cost),
  calls: r.calls,
});

/** The row to insert for a model call (a new id, now, the context size). */
export function usageRowOf(r: NewUsageRecord): UsageRow {
  return {
    id: randomUUID(),
    created_at: Date.now(),
    turn_id: r.turnId,
    session_id: r.sessionId,
    principal_id: r.principalId,
    agent_id: r.agentId,
    channel: r.channel,
    model: r.model,
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
    cache_read_input_tokens: r.cacheReadInputTokens,
    cache_creation_input_tokens: r.cacheCreationInputTokens,
    context_tokens: r.inputTokens + r.cacheReadInputTokens + r.cacheCreationInputTokens,
    cost_usd: r.costUsd,
  };
}

/** The stored record of an inserted row. */
export function usageRecordOf(r: NewUsageRecord, row: UsageRow): UsageRecord {
  return { ...r, id: row.id, createdAt: new Date(row.created_at), contextTokens: row.context_tokens };
}

type Usage = Storage['usage'];

/** The answer of `usage.changes` from the rows read after `afterSeq`. */
export function usageChanges(rows: readonly ChangeRow[], afterSeq: number): Awaited<ReturnType<Usage['changes']>> {
  const out = rows.map((r) => ({
    seq: r.seq,
    createdAt: new Date(r.created_at),
    principalId: r.principal_id,
    agentId: r.agent_id,
    tokens: r.tokens,
    usd: r.cost_usd,
  }));
  return { rows: out, last: out.at(-1)?.seq ?? afterSeq };
}

/** The answer of `usage.spend` from its query's row. */
export function usageSpend(row: SpendRow | undefined): Awaited<ReturnType<Usage['spend']>> {
  return {
    day: { tokens: row?.day_tokens ?? 0, usd: roundUsd(row?.day_usd ?? 0) },
    month: { tokens: row?.month_tokens ?? 0, usd: roundUsd(row?.month_usd ?? 0) },
  };
}

/** The answer of `usage.report` from its per-day sums. */
export function usageReport(rows: readonly SumRow[]): Awaited<ReturnType<Usage['report']>> {
  const days = rows.map((r) => ({ day: r.day, ...totalsOf(r) }));
  const totals = zero();
  let cost = 0;
  for (const r of rows) {
    totals.inputTokens += r.input;
    totals.outputTokens += r.output;
    totals.cacheReadInputTokens += r.cache_read;
    totals.cacheCreationInputTokens += r.cache_write;
    totals.calls += r.calls;
    cost += r.cost;
  }
  totals.costUsd = roundUsd(cost);
  return { totals, days };
}

/** The usage table's synchronous insert, for use inside a turn's transactions (its flushes and its end). */
export interface UsageOps {
  record(r: NewUsageRecord): UsageRecord;
}

/** The usage rows' prepared insert over one SQLite handle. */
export function usageOps(db: Database): UsageOps {
  const insert = db.prepare<[UsageRow]>(
    `INSERT INTO usage (id, created_at, turn_id, session_id, principal_id, agent_id, channel, model, input_tokens, output_tokens,
       cache_read_input_tokens, cache_creation_input_tokens, context_tokens, cost_usd)
     VALUES (@id, @created_at, @turn_id, @session_id, @principal_id, @agent_id, @channel, @model, @input_tokens, @output_tokens,
       @cache_read_input_tokens, @cache_creation_input_tokens, @context_tokens, @cost_usd)`,
  );
  return {
    record(r) {
      const row = usageRowOf(r);
      insert.run(row);
      return usageRecordOf(r, row);
    },
  };
}

/** The usage table (one row per completed model call) over one SQLite handle. */
export function usageRepo(db: Database, ops: UsageOps = usageOps(db)): Storage['usage'] {
  const perDay = db.prepare<[FilterParams], SumRow>(
    `SELECT strftime('%Y-%m-%d', created_at / 1000, 'unixepoch') AS day, sum(input_tokens) AS input, sum(output_tokens) AS output,
       sum(cache_read_input_tokens) AS cache_read, sum(cache_creation_input_tokens) AS cache_write, sum(cost_usd) AS cost, count(*) AS calls
     FROM usage
     WHERE (@principal IS NULL OR principal_id = @principal) AND (@agent IS NULL OR agent_id = @agent)
       AND (@channel IS NULL OR channel = @channel) AND (@model IS NULL OR model = @model)
       AND (@from IS NULL OR created_at >= @from) AND (@before IS NULL OR created_at < @before)
     GROUP BY day ORDER BY day`,
  );

  // One indexed range read per scope: principal_id / agent_id lead their (id, created_at) indexes.
  const spendSql = (where: string) =>
    db.prepare<[SpendParams], SpendRow>(
      `SELECT coalesce(sum(CASE WHEN created_at >= @day THEN ${TOKENS} END), 0) AS day_tokens,
         coalesce(sum(CASE WHEN created_at >= @day THEN cost_usd END), 0) AS day_usd,
         coalesce(sum(${TOKENS}), 0) AS month_tokens, coalesce(sum(cost_usd), 0) AS month_usd
       FROM usage WHERE ${where} created_at >= min(@day, @month) AND (@through IS NULL OR rowid <= @through)`,
    );
  // The table has no deletes, so its rowid is a monotonic insertion sequence.
  const changes = db.prepare<[number, number], ChangeRow>(
    `SELECT rowid AS seq, created_at, principal_id, agent_id, ${TOKENS} AS tokens, cost_usd FROM usage WHERE rowid > ? ORDER BY rowid LIMIT ?`,
  );
  const lastSeq = db.prepare<[], { seq: number }>('SELECT coalesce(max(rowid), 0) AS seq FROM usage');
  const spendOfPrincipal = spendSql('principal_id = @id AND');
  const spendOfAgent = spendSql('agent_id = @id AND');
  const spendOfAll = spendSql('');

  return {
    async record(r) {
      return ops.record(r);
    },
    async changes(afterSeq, limit = 10_000) {
      if (afterSeq === null) return { rows: [], last: lastSeq.get()?.seq ?? 0 };
      return usageChanges(changes.all(afterSeq, limit), afterSeq);
    },
    async spend(filter, since, throughSeq) {
      const stmt = filter.principalId !== undefined ? spendOfPrincipal : filter.agentId !== undefined ? spendOfAgent : spendOfAll;
      const row = stmt.get({
        id: filter.principalId ?? filter.agentId ?? null,
        day: since.day.getTime(),
        month: since.month.getTime(),
        through: throughSeq ?? null,
      });
      return usageSpend(row);
    },
    async report(filter = {}) {
      const rows = perDay.all({
        principal: filter.principalId ?? null,
        agent: filter.agentId ?? null,
        channel: filter.channel ?? null,
        model: filter.model ?? null,
        from: filter.from ? filter.from.getTime() : null,
        before: filter.before ? filter.before.getTime() : null,
      });
      return usageReport(rows);
    },
  };
}
