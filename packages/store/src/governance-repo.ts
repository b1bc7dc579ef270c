import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { isAskSource, type Approval, type AuditEntry, type Storage, type StoredRule } from '@switchboard/core';

/** An `approvals` row. */
export interface ApprovalRow {
  id: string;
  turn_id: string;
  tool_use_id: string;
  session_id: string;
  tool: string;
  summary: string;
  input: string;
  requester_principal_id: string | null;
  conversation: string;
  status: string;
  decided_by: string | null;
  decided_at: number | null;
  always: number;
  reason: string | null;
  created_at: number;
  expires_at: number;
  source: string;
  always_rule: string | null;
  choices: string | null;
  choice: string | null;
}

/** A `rules` row. */
export interface RuleRow {
  id: string;
  scope_kind: string;
  scope_id: string | null;
  behavior: string;
  rule: string;
  created_by: string;
  created_at: number;
}

/** An `audit` row. */
export interface AuditRow {
  id: number;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  detail: string;
}

/** A stored approval row as the core type. */
export const toApproval = (r: ApprovalRow): Approval => ({
  id: r.id,
  turnId: r.turn_id,
  toolUseId: r.tool_use_id,
  sessionId: r.session_id,
  tool: r.tool,
  summary: r.summary,
  input: JSON.parse(r.input) as unknown,
  requesterPrincipalId: r.requester_principal_id,
  conversation: JSON.parse(r.conversation) as Approval['conversation'],
  status: r.status as Approval['status'],
  decidedBy: r.decided_by,
  decidedAt: r.decided_at === null ? null : new Date(r.decided_at),
  always: r.always === 1,
  reason: r.reason,
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
  source: isAskSource(r.source) ? r.source : 'safety',
  alwaysRule: r.always_rule,
  choices: choicesOf(r.choices),
  choice: r.choice,
});

/** The stored choices: a JSON array of strings, else none (a row this version did not write). */
function choicesOf(raw: string | null): string[] | null {
  if (raw === null) return null;
  try {
    const v: unknown = JSON.parse(raw);
    return Array.isArray(v) && v.every((c) => typeof c === 'string') ? v : null;
  } catch {
    return null;
  }
}

/** A stored rule row as the core type. */
export const toRule = (r: RuleRow): StoredRule => ({
  id: r.id,
  scopeKind: r.scope_kind as StoredRule['scopeKind'],
  scopeId: r.scope_id,
  behavior: r.behavior as StoredRule['behavior'],
  rule: r.rule,
  createdBy: r.created_by,
  createdAt: new Date(r.created_at),
});

/** A stored audit row as the core type. */
export const toAudit = (r: AuditRow): AuditEntry => ({
  id: r.id,
  at: new Date(r.at),
  actor: r.actor,
  action: r.action,
  target: r.target,
  detail: JSON.parse(r.detail) as unknown,
});

/** Approvals (atomic claim), stored permission rules and the audit log over one SQLite handle. */
export function governanceRepos(db: Database): Pick<Storage, 'approvals' | 'rules' | 'audit'> {
  const insertApproval = db.prepare<[ApprovalRow]>(
    `INSERT INTO approvals (id, turn_id, tool_use_id, session_id, tool, summary, input, requester_principal_id, conversation,
       status, decided_by, decided_at, always, reason, created_at, expires_at, source, always_rule, choices, choice)
     VALUES (@id, @turn_id, @tool_use_id, @session_id, @tool, @summary, @input, @requester_principal_id, @conversation,
       @status, @decided_by, @decided_at, @always, @reason, @created_at, @expires_at, @source, @always_rule, @choices, @choice)
     ON CONFLICT (turn_id, tool_use_id) DO NOTHING`,
  );
  const byToolUse = db.prepare<[string, string], ApprovalRow>('SELECT * FROM approvals WHERE turn_id = ? AND tool_use_id = ?');
  const byId = db.prepare<[string], ApprovalRow>('SELECT * FROM approvals WHERE id = ?');
  const claim = db.prepare<[string, string, number, number, string | null, string | null, string]>(
    `UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, always = ?, reason = ?, choice = ? WHERE id = ? AND status = 'pending'`,
  );
  const listApprovals = db.prepare<
    [{ status: string | null; session: string | null; principal: string | null; turn: string | null; limit: number; offset: number }],
    ApprovalRow
  >(
    `SELECT * FROM approvals WHERE (@status IS NULL OR status = @status) AND (@session IS NULL OR session_id = @session)
       AND (@principal IS NULL OR requester_principal_id = @principal) AND (@turn IS NULL OR turn_id = @turn)
       ORDER BY created_at DESC, rowid DESC LIMIT @limit OFFSET @offset`,
  );
  // One turn's approvals through the turn_id index, unordered: `list` sorts them (see there).
  const turnApprovals = db.prepare<
    [{ status: string | null; session: string | null; principal: string | null; turn: string }],
    ApprovalRow & { row_id: number }
  >(
    `SELECT rowid AS row_id, * FROM approvals WHERE turn_id = @turn AND (@status IS NULL OR status = @status)
       AND (@session IS NULL OR session_id = @session) AND (@principal IS NULL OR requester_principal_id = @principal)`,
  );
  const insertRule = db.prepare<[RuleRow]>(
    `INSERT INTO rules (id, scope_kind, scope_id, behavior, rule, created_by, created_at)
     VALUES (@id, @scope_kind, @scope_id, @behavior, @rule, @created_by, @created_at)`,
  );
  const listRules = db.prepare<[], RuleRow>('SELECT * FROM rules ORDER BY created_at, rowid');
  const deleteRule = db.prepare<[string]>('DELETE FROM rules WHERE id = ?');
  const insertAudit = db.prepare<[number, string, string, string | null, string]>(
    'INSERT INTO audit (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?)',
  );
  const updateAudit = db.prepare<[string, number]>('UPDATE audit SET detail = ? WHERE id = ?');
  const listAudit = db.prepare<[{ action: string | null; actor: string | null; since: number; limit: number; offset: number }], AuditRow>(
    `SELECT * FROM audit WHERE (@action IS NULL OR action = @action) AND (@actor IS NULL OR actor = @actor) AND at >= @since
     ORDER BY id DESC LIMIT @limit OFFSET @offset`,
  );

  const createApproval = db.transaction((row: ApprovalRow) => {
    const inserted = insertApproval.run(row).changes === 1;
    return { row: byToolUse.get(row.turn_id, row.tool_use_id)!, existed: !inserted };
  });

  return {
    approvals: {
      async create(a) {
        const now = Date.now();
        const { row, existed } = createApproval.immediate({
          id: randomUUID(),
          turn_id: a.turnId,
          tool_use_id: a.toolUseId,
          session_id: a.sessionId,
          tool: a.tool,
          summary: a.summary,
          input: JSON.stringify(a.input ?? null),
          requester_principal_id: a.requesterPrincipalId,
          conversation: JSON.stringify(a.conversation),
          status: 'pending',
          decided_by: null,
          decided_at: null,
          always: 0,
          reason: null,
          created_at: now,
          expires_at: a.expiresAt.getTime(),
          source: a.source,
          always_rule: a.alwaysRule,
          choices: a.choices ? JSON.stringify(a.choices) : null,
          choice: null,
        });
        return { approval: toApproval(row), existed };
      },
      async get(id) {
        const row = byId.get(id);
        return row ? toApproval(row) : null;
      },
      async claim(id, status, by, opts = {}) {
        return claim.run(status, by, Date.now(), opts.always ? 1 : 0, opts.reason ?? null, opts.choice ?? null, id).changes === 1;
      },
      async list(filter = {}) {
        if (filter.turnId !== undefined) {
          // A turn has few approvals; sorting them here spares the ORDER BY's temporary B-tree, which
          // SQLite builds even for no rows (~20 µs) — and every ended turn asks (cancelTurn).
          const rows = turnApprovals
            .all({ status: filter.status ?? null, session: filter.sessionId ?? null, principal: filter.principalId ?? null, turn: filter.turnId })
            .sort((a, b) => b.created_at - a.created_at || b.row_id - a.row_id);
          // As SQL reads them: a negative offset is 0, a negative limit none.
          const offset = Math.max(0, filter.offset ?? 0);
          const limit = filter.limit ?? 100;
          return rows.slice(offset, limit < 0 ? undefined : offset + limit).map(toApproval);
        }
        return listApprovals
          .all({
            status: filter.status ?? null,
            session: filter.sessionId ?? null,
            principal: filter.principalId ?? null,
            turn: filter.turnId ?? null,
            limit: filter.limit ?? 100,
            offset: filter.offset ?? 0,
          })
          .map(toApproval);
      },
    },
    rules: {
      async list() {
        return listRules.all().map(toRule);
      },
      async create(r) {
        const row: RuleRow = {
          id: randomUUID(),
          scope_kind: r.scopeKind,
          scope_id: r.scopeId,
          behavior: r.behavior,
          rule: r.rule,
          created_by: r.createdBy,
          created_at: Date.now(),
        };
        insertRule.run(row);
        return toRule(row);
      },
      async delete(id) {
        return deleteRule.run(id).changes === 1;
      },
    },
    audit: {
      async append(e) {
        return Number(insertAudit.run(Date.now(), e.actor, e.action, e.target ?? null, JSON.stringify(e.detail ?? {})).lastInsertRowid);
      },
      async updateDetail(id, detail) {
        return updateAudit.run(JSON.stringify(detail ?? {}), id).changes === 1;
      },
      async list(filter = {}) {
        return listAudit
          .all({
            action: filter.action ?? null,
            actor: filter.actor ?? null,
            since: filter.since?.getTime() ?? 0,
            limit: filter.limit ?? 100,
            offset: filter.offset ?? 0,
          })
          .map(toAudit);
      },
    },
  };
}
