import { randomUUID } from 'node:crypto';
import type { Storage } from '@switchboard/core';
import { type ApprovalRow, type AuditRow, type RuleRow, toApproval, toAudit, toRule } from '../governance-repo.js';
import type { PgDb } from './db.js';

/** SQLite reads a negative LIMIT as "no limit" and a negative OFFSET as none; PostgreSQL refuses both. */
const limitOf = (n: number): number | null => (n < 0 ? null : n);
const offsetOf = (n: number): number => Math.max(0, n);

/** Approvals (atomic claim), stored permission rules and the audit log over a PostgreSQL pool. */
export function pgGovernanceRepos(db: PgDb): Pick<Storage, 'approvals' | 'rules' | 'audit'> {
  return {
    approvals: {
      async create(a) {
        const row: ApprovalRow = {
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
          created_at: Date.now(),
          expires_at: a.expiresAt.getTime(),
          source: a.source,
          always_rule: a.alwaysRule,
          choices: a.choices ? JSON.stringify(a.choices) : null,
          choice: null,
        };
        // Outside a transaction: a concurrent create of the same slot waits on the unique index, then
        // inserts nothing, and the SELECT after it (a new snapshot) reads the row the other one committed.
        const inserted = await db.row<ApprovalRow>(
          `INSERT INTO approvals (id, turn_id, tool_use_id, session_id, tool, summary, input, requester_principal_id, conversation,
             status, decided_by, decided_at, always, reason, created_at, expires_at, source, always_rule, choices, choice)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
           ON CONFLICT (turn_id, tool_use_id) DO NOTHING RETURNING *`,
          [
            row.id,
            row.turn_id,
            row.tool_use_id,
            row.session_id,
            row.tool,
            row.summary,
            row.input,
            row.requester_principal_id,
            row.conversation,
            row.status,
            row.decided_by,
            row.decided_at,
            row.always,
            row.reason,
            row.created_at,
            row.expires_at,
            row.source,
            row.always_rule,
            row.choices,
            row.choice,
          ],
        );
        if (inserted) return { approval: toApproval(inserted), existed: false };
        const existing = await db.row<ApprovalRow>('SELECT * FROM approvals WHERE turn_id = $1 AND tool_use_id = $2', [a.turnId, a.toolUseId]);
        if (!existing) throw new Error(`approval ${a.turnId}/${a.toolUseId} conflicted on insert but cannot be read`);
        return { approval: toApproval(existing), existed: true };
      },
      async get(id) {
        const row = await db.row<ApprovalRow>('SELECT * FROM approvals WHERE id = $1', [id]);
        return row ? toApproval(row) : null;
      },
      async claim(id, status, by, opts = {}) {
        // One UPDATE guarded by the status: a concurrent claim waits on the row lock, re-reads the status and changes nothing.
        const changed = await db.run(
          `UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3, always = $4, reason = $5, choice = $6 WHERE id = $7 AND status = 'pending'`,
          [status, by, Date.now(), opts.always ? 1 : 0, opts.reason ?? null, opts.choice ?? null, id],
        );
        return changed === 1;
      },
      async list(filter = {}) {
        const rows = await db.rows<ApprovalRow>(
          `SELECT * FROM approvals WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR session_id = $2)
             AND ($3::text IS NULL OR requester_principal_id = $3) AND ($4::text IS NULL OR turn_id = $4)
           ORDER BY created_at DESC, rowid DESC LIMIT $5 OFFSET $6`,
          [
            filter.status ?? null,
            filter.sessionId ?? null,
            filter.principalId ?? null,
            filter.turnId ?? null,
            limitOf(filter.limit ?? 100),
            offsetOf(filter.offset ?? 0),
          ],
        );
        return rows.map(toApproval);
      },
    },
    rules: {
      async list() {
        return (await db.rows<RuleRow>('SELECT * FROM rules ORDER BY created_at, rowid')).map(toRule);
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
        await db.run('INSERT INTO rules (id, scope_kind, scope_id, behavior, rule, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
          row.id,
          row.scope_kind,
          row.scope_id,
          row.behavior,
          row.rule,
          row.created_by,
          row.created_at,
        ]);
        return toRule(row);
      },
      async delete(id) {
        return (await db.run('DELETE FROM rules WHERE id = $1', [id])) === 1;
      },
    },
    audit: {
      // No reader pages the audit log by id (the control API pages by offset), so inserts take no cursor lock.
      async append(e) {
        const row = await db.row<{ id: number }>('INSERT INTO audit (at, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5) RETURNING id', [
          Date.now(),
          e.actor,
          e.action,
          e.target ?? null,
          JSON.stringify(e.detail ?? {}),
        ]);
        if (!row) throw new Error('audit insert returned no id');
        return row.id;
      },
      async updateDetail(id, detail) {
        // No row has such an id (and PostgreSQL would refuse it as a bigint).
        if (!Number.isSafeInteger(id)) return false;
        return (await db.run('UPDATE audit SET detail = $1 WHERE id = $2', [JSON.stringify(detail ?? {}), id])) === 1;
      },
      async list(filter = {}) {
        const rows = await db.rows<AuditRow>(
          `SELECT * FROM audit WHERE ($1::text IS NULL OR action = $1) AND ($2::text IS NULL OR actor = $2) AND at >= $3
           ORDER BY id DESC LIMIT $4 OFFSET $5`,
          [filter.action ?? null, filter.actor ?? null, filter.since?.getTime() ?? 0, limitOf(filter.limit ?? 100), offsetOf(filter.offset ?? 0)],
        );
        return rows.map(toAudit);
      },
    },
  };
}
