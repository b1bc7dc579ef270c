import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Memory, MemoryHit, MemoryRepo, MemoryScopeRef, NewMemory } from '@switchboard/core';
import { ftsQuery } from './memory-fts.js';

/** A `memories` row (the columns both engines share). */
export interface MemoryRow {
  id: string;
  scope: string;
  principal_id: string | null;
  agent_id: string | null;
  text: string;
  tags: string;
  created_by: string | null;
  created_at: number;
}

/** The most results one search or list returns. */
export const MAX_RESULTS = 50;

function parseTags(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

/** A stored memory row as the core type. */
export function toMemory(r: MemoryRow): Memory {
  return {
    id: r.id,
    scope: r.scope === 'team' ? 'team' : 'private',
    principalId: r.principal_id,
    agentId: r.agent_id,
    text: r.text,
    tags: parseTags(r.tags),
    createdBy: r.created_by,
    createdAt: new Date(r.created_at),
  };
}

/** The scope filter's two parameters: the private principals and the team agents, as JSON arrays. */
function scopeParams(scopes: readonly MemoryScopeRef[]): { privates: string; teams: string } {
  const privates = scopes.flatMap((s) => (s.scope === 'private' ? [s.principalId] : []));
  const teams = scopes.flatMap((s) => (s.scope === 'team' ? [s.agentId] : []));
  return { privates: JSON.stringify(privates), teams: JSON.stringify(teams) };
}

const SCOPE_FILTER = `((m.scope = 'private' AND m.principal_id IN (SELECT value FROM json_each(@privates)))
  OR (m.scope = 'team' AND m.agent_id IN (SELECT value FROM json_each(@teams))))`;

/** A requested result count (or offset) made a whole number in [0, MAX_RESULTS]; `fallback` when it is not a finite number. */
export const bound = (n: number | undefined, fallback: number) => Math.max(0, Math.min(MAX_RESULTS, Math.floor(Number.isFinite(n) ? (n as number) : fallback)));

/** The memories repository over one SQLite handle: rows in `memories`, full-text search through `memories_fts` (FTS5, bm25). */
export function memoryRepo(db: Database): MemoryRepo {
  const insert = db.prepare<[MemoryRow]>(
    `INSERT INTO memories (id, scope, principal_id, agent_id, text, tags, created_by, created_at)
     VALUES (@id, @scope, @principal_id, @agent_id, @text, @tags, @created_by, @created_at)`,
  );
  const byId = db.prepare<[string], MemoryRow>('SELECT * FROM memories WHERE id = ?');
  const search = db.prepare<[{ q: string; privates: string; teams: string; limit: number }], MemoryRow & { rank: number }>(
    `SELECT m.*, bm25(memories_fts) AS rank FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
     WHERE memories_fts MATCH @q AND ${SCOPE_FILTER} ORDER BY rank, m.seq DESC LIMIT @limit`,
  );
  const list = db.prepare<[{ privates: string; teams: string; limit: number; offset: number }], MemoryRow>(
    `SELECT m.* FROM memories m WHERE ${SCOPE_FILTER} ORDER BY m.created_at DESC, m.seq DESC LIMIT @limit OFFSET @offset`,
  );
  const count = db.prepare<[{ privates: string; teams: string }], { n: number }>(`SELECT count(*) AS n FROM memories m WHERE ${SCOPE_FILTER}`);
  const remove = db.prepare<[string]>('DELETE FROM memories WHERE id = ?');
  const removeOf = db.prepare<[string]>(`DELETE FROM memories WHERE scope = 'private' AND principal_id = ?`);

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
      insert.run(row);
      return toMemory(row);
    },
    async get(id) {
      const r = byId.get(id);
      return r ? toMemory(r) : null;
    },
    async search(q) {
      const match = ftsQuery(q.text);
      const limit = bound(q.limit, 10);
      if (match === null || limit === 0 || q.scopes.length === 0) return [];
      return search.all({ q: match, ...scopeParams(q.scopes), limit }).map((r): MemoryHit => ({ memory: toMemory(r), rank: r.rank }));
    },
    async list(scopes, opts) {
      if (scopes.length === 0) return [];
      return list.all({ ...scopeParams(scopes), limit: bound(opts?.limit, MAX_RESULTS), offset: Math.max(0, Math.floor(opts?.offset ?? 0)) }).map(toMemory);
    },
    async count(scopes) {
      if (scopes.length === 0) return 0;
      return count.get(scopeParams(scopes))?.n ?? 0;
    },
    async delete(id) {
      return remove.run(id).changes === 1;
    },
    async deleteOfPrincipal(principalId) {
      return removeOf.run(principalId).changes;
    },
  };
}
