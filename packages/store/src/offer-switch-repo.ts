import type { Database } from 'better-sqlite3';
import type { OfferSwitch, Storage } from '@switchboard/core';

/** An `offer_switches` row. */
export interface OfferRow {
  tool: string;
  scope_kind: string;
  scope_id: string;
  created_by: string;
  created_at: number;
}

const SCOPE_KINDS: ReadonlySet<string> = new Set<OfferSwitch['scopeKind']>(['gateway', 'agent', 'channel', 'conversation', 'role', 'principal', 'session']);

/** A stored row as a switch; a row with an unknown scope kind is skipped (null). The gateway's `''` id reads as null. */
export function toSwitch(r: OfferRow): OfferSwitch | null {
  if (!SCOPE_KINDS.has(r.scope_kind)) return null;
  const scopeKind = r.scope_kind as OfferSwitch['scopeKind'];
  return { tool: r.tool, scopeKind, scopeId: scopeKind === 'gateway' ? null : r.scope_id, createdBy: r.created_by, createdAt: new Date(r.created_at) };
}

/** Operators' offer-switches over one SQLite handle: one row per (tool, scope kind, scope id). */
export function offerSwitchRepo(db: Database): Storage['offerSwitches'] {
  const list = db.prepare<[], OfferRow>('SELECT tool, scope_kind, scope_id, created_by, created_at FROM offer_switches ORDER BY created_at, rowid');
  const insert = db.prepare<[OfferRow]>(
    `INSERT INTO offer_switches (tool, scope_kind, scope_id, created_by, created_at) VALUES (@tool, @scope_kind, @scope_id, @created_by, @created_at)
     ON CONFLICT (tool, scope_kind, scope_id) DO NOTHING`,
  );
  const remove = db.prepare<[string, string, string]>('DELETE FROM offer_switches WHERE tool = ? AND scope_kind = ? AND scope_id = ?');
  return {
    async list() {
      return list.all().flatMap((r) => toSwitch(r) ?? []);
    },
    async put(s) {
      const row = { tool: s.tool, scope_kind: s.scopeKind, scope_id: s.scopeId ?? '', created_by: s.createdBy, created_at: Date.now() };
      return insert.run(row).changes === 1;
    },
    async remove(tool, scopeKind, scopeId) {
      return remove.run(tool, scopeKind, scopeId ?? '').changes === 1;
    },
  };
}
