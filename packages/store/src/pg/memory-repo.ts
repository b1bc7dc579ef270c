import { randomBytes } from 'node:crypto';
import type { MemoryHit, MemoryRepo, MemoryScopeRef, NewMemory } from '@switchboard/core';
import { searchDocument, tsQuery } from '../memory-fts.js';
import { bound, MAX_RESULTS, type MemoryRow, toMemory } from '../memory-repo.js';
import type { PgDb } from './db.js';

/** The scope filter's two parameters: the private principals and the team agents. */
function scopeParams(scopes: readonly MemoryScopeRef[]): [string[], string[]] {
  const privates = scopes.flatMap((s) => (s.scope === 'private' ? [s.principalId] : []));
  const teams = scopes.flatMap((s) => (s.scope === 'team' ? [s.agentId] : []));
  return [privates, teams];
}

/** The scope filter over parameters `$n` (private principals) and `$n+1` (team agents). */
const scopeFilter = (n: number): string =>
  `((m.scope = 'private' AND m.principal_id = ANY($${n}::text[])) OR (m.scope = 'team' AND m.agent_id = ANY($${n + 1}::text[])))`;

/** A list's offset: a whole number from 0 (anything else reads as 0: PostgreSQL refuses a negative or NaN OFFSET). */
const offsetOf = (n: number | undefined): number => (n !== undefined && Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0);

/** The columns a {@link MemoryRow} holds (never the search document or its tsvector). */
const COLUMNS = 'm.id, m.scope, m.principal_id, m.agent_id, m.text, m.tags, m.created_by, m.created_at';

/**
 * The memories repository over a PostgreSQL pool: rows in `memories`, full-text search through its
 * `tsv` column (the folded words of `search`, `simple` configuration). A hit's rank is the negated
 * `ts_rank`, so that lower is better, as with FTS5's bm25.
 */
export function pgMemoryRepo(db: PgDb): MemoryRepo {
  return {
    async save(m: NewMemory) {
      const row: MemoryRow = {
        id: `mem_${randomBytes(6).toString('hex')}`,
        scope: m.scope,
        principal_id: m.scope === 'private' ? m.principalId : null,
        agent_id: m.scope === 'team' ? m.agentId : null,
        text: m.text,
        tags: JSON.stringify([...m.tags]),
        created_by: m.createdBy,
        created_at: Date.now(),
      };
      await db.run(
        `INSERT INTO memories (id, scope, principal_id, agent_id, text, tags, created_by, created_at, search)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [row.id, row.scope, row.principal_id, row.agent_id, row.text, row.tags, row.created_by, row.created_at, searchDocument(row.text, row.tags)],
      );
      return toMemory(row);
    },
    async get(id) {
      const r = await db.row<MemoryRow>(`SELECT ${COLUMNS} FROM memories m WHERE m.id = $1`, [id]);
      return r ? toMemory(r) : null;
    },
    async search(q) {
      const match = tsQuery(q.text);
      const limit = bound(q.limit, 10);
      if (match === null || limit === 0 || q.scopes.length === 0) return [];
      const rows = await db.rows<MemoryRow & { rank: number }>(
        `SELECT ${COLUMNS}, -ts_rank(m.tsv, query) AS rank FROM memories m, to_tsquery('simple', $1) AS query
         WHERE m.tsv @@ query AND ${scopeFilter(2)} ORDER BY rank, m.seq DESC LIMIT $4`,
        [match, ...scopeParams(q.scopes), limit],
      );
      return rows.map((r): MemoryHit => ({ memory: toMemory(r), rank: r.rank }));
    },
    async list(scopes, opts) {
      if (scopes.length === 0) return [];
      const rows = await db.rows<MemoryRow>(
        `SELECT ${COLUMNS} FROM memories m WHERE ${scopeFilter(1)} ORDER BY m.created_at DESC, m.seq DESC LIMIT $3 OFFSET $4`,
        [...scopeParams(scopes), bound(opts?.limit, MAX_RESULTS), offsetOf(opts?.offset)],
      );
      return rows.map(toMemory);
    },
    async count(scopes) {
      if (scopes.length === 0) return 0;
      return (await db.row<{ n: number }>(`SELECT count(*) AS n FROM memories m WHERE ${scopeFilter(1)}`, scopeParams(scopes)))?.n ?? 0;
    },
    async delete(id) {
      return (await db.run('DELETE FROM memories WHERE id = $1', [id])) === 1;
    },
    async deleteOfPrincipal(principalId) {
      return db.run(`DELETE FROM memories WHERE scope = 'private' AND principal_id = $1`, [principalId]);
    },
  };
}
