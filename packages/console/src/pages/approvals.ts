import { useState } from 'preact/hooks';
import { seg } from '../api';
import { Badge, Empty, ErrorNote, Link, Loading, Page } from '../components/ui';
import { api } from '../context';
import { conversationText, formatRelative, formatTime } from '../format';
import { html } from '../html';
import { useAction, useAsync, useEvents } from '../hooks';
import { pathFor } from '../router';
import { type ConsoleSession, hasScope } from '../session';
import type { Approval, AuditEntry } from '../types';

function PendingApproval(props: { approval: Approval; onDecided: () => void }) {
  const a = props.approval;
  const [reason, setReason] = useState('');
  const [always, setAlways] = useState(false);
  const [mode, setMode] = useState(a.choices?.[0] ?? '');
  const action = useAction();
  const plan = a.choices !== null && a.choices.length > 0;

  const decide = (decision: 'allow' | 'deny') =>
    action
      .run(() =>
        api.post(`/approvals/${seg(a.id)}/decision`, {
          decision,
          ...(reason.trim() ? { reason: reason.trim() } : {}),
          ...(decision === 'allow' && always && !plan ? { always: true } : {}),
          ...(decision === 'allow' && plan && mode ? { mode } : {}),
        }),
      )
      .then((ok) => ok && props.onDecided());

  return html`<li class="card approval" data-testid=${`approval-${a.id}`}>
    <div class="row">
      <strong class="mono">${a.tool}</strong>
      <${Badge} state=${a.source} />
      <span class="muted small">asked ${formatRelative(a.createdAt)} · expires ${formatRelative(a.expiresAt)}</span>
    </div>
    <pre class="summary" data-testid=${`approval-summary-${a.id}`}>${a.summary}</pre>
    <p class="small muted">
      Session <${Link} to=${pathFor('session', a.sessionId)}>${a.sessionId}<//>
      ${a.requesterPrincipalId ? html` · requester <${Link} to=${pathFor('person', a.requesterPrincipalId)}>${a.requesterPrincipalId}<//>` : null}
      ${conversationText(a.conversation) ? ` · ${conversationText(a.conversation)}` : null}
    </p>
    <div class="decide">
      <label class="field">
        <span>Reason (optional; a deny's reason goes to the model)</span>
        <input type="text" maxlength="500" value=${reason} onInput=${(e: Event) => setReason((e.target as HTMLInputElement).value)} data-testid=${`approval-reason-${a.id}`} />
      </label>
      ${
        plan
          ? html`<label class="field">
              <span>Mode after the plan</span>
              <select value=${mode} onChange=${(e: Event) => setMode((e.target as HTMLSelectElement).value)} data-testid=${`approval-mode-${a.id}`}>
                ${(a.choices ?? []).map((c) => html`<option key=${c} value=${c}>${c}</option>`)}
              </select>
            </label>`
          : html`<label class="check">
              <input type="checkbox" checked=${always} onChange=${(e: Event) => setAlways((e.target as HTMLInputElement).checked)} data-testid=${`approval-always-${a.id}`} />
              Always allow this exact call
            </label>`
      }
      <div class="buttons">
        <button type="button" class="primary" disabled=${action.busy} onClick=${() => decide('allow')} data-testid=${`approval-approve-${a.id}`}>Approve</button>
        <button type="button" class="danger" disabled=${action.busy} onClick=${() => decide('deny')} data-testid=${`approval-deny-${a.id}`}>Deny</button>
      </div>
    </div>
    <${ErrorNote} error=${action.error} testid=${`approval-error-${a.id}`} />
  </li>`;
}

/** Approvals: the pending list (live), decide with reason / always / mode; recent decisions and the audit of who decided. */
export function ApprovalsPage(props: { session: ConsoleSession }) {
  const allowed = hasScope(props.session, 'approvals');
  const pending = useAsync(async () => (allowed ? (await api.get<{ approvals: Approval[] }>('/approvals', { status: 'pending' })).approvals : []), [allowed]);
  const recent = useAsync(
    async () => (allowed ? (await api.get<{ approvals: Approval[] }>('/approvals', { limit: 100 })).approvals.filter((a) => a.status !== 'pending') : []),
    [allowed],
  );
  const canRead = hasScope(props.session, 'read');
  const audit = useAsync(
    async () => (canRead ? (await api.get<{ entries: AuditEntry[] }>('/audit', { action: 'approval.decided', limit: 20 })).entries : []),
    [canRead],
  );
  const reloadAll = () => {
    pending.reload();
    recent.reload();
    audit.reload();
  };
  useEvents(['approval.requested', 'approval.decided'], reloadAll);

  if (!allowed) return html`<${Page} name="approvals" title="Approvals"><p>This page needs the "approvals" scope.</p><//>`;
  const list = pending.data ?? [];
  return html`<${Page} name="approvals" title="Approvals">
    <h2>Pending</h2>
    <${Loading} when=${pending.loading && !pending.data} />
    <${ErrorNote} error=${pending.error} />
    ${list.length === 0 && pending.data ? html`<${Empty} testid="approvals-empty">Nothing is waiting for a decision.<//>` : null}
    <ul class="cards" data-testid="approvals-pending" aria-live="polite">
      ${list.map((a) => html`<${PendingApproval} key=${a.id} approval=${a} onDecided=${reloadAll} />`)}
    </ul>

    <h2>Decided</h2>
    <${ErrorNote} error=${recent.error} />
    ${recent.data && recent.data.length === 0 ? html`<${Empty}>No approval has been decided yet.<//>` : null}
    <div class="table-wrap">
      <table data-testid="approvals-decided">
        <thead><tr><th>Tool</th><th>Status</th><th>Decided by</th><th>When</th><th>Always</th><th>Mode</th></tr></thead>
        <tbody>
          ${(recent.data ?? []).map(
            (a) => html`<tr key=${a.id} data-testid=${`approval-decided-${a.id}`}>
              <td class="mono">${a.tool}</td>
              <td><${Badge} state=${a.status} /></td>
              <td>${a.decidedBy ?? '—'}</td>
              <td>${formatTime(a.decidedAt)}</td>
              <td>${a.always ? 'yes' : ''}</td>
              <td>${a.choice ?? ''}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>

    ${
      canRead
        ? html`<h2>Audit: who decided what</h2>
            <${ErrorNote} error=${audit.error} />
            ${audit.data && audit.data.length === 0 ? html`<${Empty}>No decision in the audit log yet.<//>` : null}
            <ul class="plain" data-testid="approvals-audit">
              ${(audit.data ?? []).map(
                (e, i) => html`<li key=${e.id ?? i}>${formatTime(e.at)} · <strong>${e.actor}</strong> · ${e.target ?? ''} · ${auditDetail(e.detail)}</li>`,
              )}
            </ul>`
        : null
    }
  <//>`;
}

function auditDetail(detail: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const key of ['decision', 'tool', 'always', 'reason', 'mode']) {
    const v = detail[key];
    if (v !== undefined && v !== null && v !== false) parts.push(`${key}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  return parts.join(', ');
}
