import { useState } from 'preact/hooks';
import { seg } from '../api';
import { Badge, ConfirmButton, Empty, ErrorNote, Loading, Page } from '../components/ui';
import { api } from '../context';
import { formatCount, formatRelative, formatTime } from '../format';
import { html } from '../html';
import { useAction, useAsync, useEvents } from '../hooks';
import { type ConsoleSession, hasScope } from '../session';
import type { PairingRequest, Principal } from '../types';

const ROLES = ['guest', 'member', 'admin', 'owner'] as const;

function PendingCode(props: { request: PairingRequest; onDone: () => void; people: Principal[] | null }) {
  const p = props.request;
  const [role, setRole] = useState('');
  const [linkTo, setLinkTo] = useState('');
  const action = useAction();
  // Linking to an existing person (the same human on another channel) takes their role; it needs `admin`.
  const body = linkTo ? { principalId: linkTo } : role ? { role } : {};
  const approve = () => action.run(() => api.post(`/pairing/${seg(p.code)}/approve`, body)).then((ok) => ok && props.onDone());
  const reject = () => action.run(() => api.post(`/pairing/${seg(p.code)}/reject`)).then((ok) => ok && props.onDone());
  return html`<li class="card" data-testid=${`pairing-${p.code}`}>
    <div class="row">
      <strong class="mono code">${p.code}</strong>
      <span>${p.channel}:${p.account}</span>
      <span class="muted small">asked ${formatRelative(p.createdAt)} · expires ${formatRelative(p.expiresAt)}</span>
    </div>
    <p>
      From <strong data-testid=${`pairing-sender-${p.code}`}>${p.displayName ?? p.identity}</strong>
      ${p.displayName ? html` <span class="muted mono">(${p.identity})</span>` : null}
      · ${formatCount(p.heldMessages)} held message${p.heldMessages === 1 ? '' : 's'} (${formatCount(p.heldBytes)} bytes)
    </p>
    <div class="decide">
      <label class="field">
        <span>Role</span>
        <select value=${role} disabled=${linkTo !== ''} onChange=${(e: Event) => setRole((e.target as HTMLSelectElement).value)} data-testid=${`pairing-role-${p.code}`}>
          <option value="">the account's pairing role</option>
          ${ROLES.map((r) => html`<option key=${r} value=${r}>${r}</option>`)}
        </select>
      </label>
      ${
        props.people
          ? html`<label class="field">
              <span>Or link to</span>
              <select value=${linkTo} onChange=${(e: Event) => setLinkTo((e.target as HTMLSelectElement).value)} data-testid=${`pairing-link-${p.code}`}>
                <option value="">a new person</option>
                ${props.people.filter((x) => x.role !== 'owner').map((x) => html`<option key=${x.id} value=${x.id}>${x.name} (${x.role})</option>`)}
              </select>
            </label>`
          : null
      }
      <div class="buttons">
        <button type="button" class="primary" disabled=${action.busy} onClick=${approve} data-testid=${`pairing-approve-${p.code}`}>Approve</button>
        <${ConfirmButton} label="Reject" danger=${true} onConfirm=${reject} testid=${`pairing-reject-${p.code}`} disabled=${action.busy} />
      </div>
    </div>
    <${ErrorNote} error=${action.error} testid=${`pairing-error-${p.code}`} />
  </li>`;
}

/** Pairing: pending codes with the held message's sender and channel; approve (with role) or reject. */
export function PairingPage(props: { session: ConsoleSession }) {
  const allowed = hasScope(props.session, 'pairing');
  const pending = useAsync(async () => (allowed ? (await api.get<{ requests: PairingRequest[] }>('/pairing', { status: 'pending' })).requests : []), [allowed]);
  const approved = useAsync(
    async () => (allowed ? (await api.get<{ requests: PairingRequest[] }>('/pairing', { status: 'approved' })).requests : []),
    [allowed],
  );
  const isAdmin = hasScope(props.session, 'admin');
  const people = useAsync(async () => (isAdmin ? (await api.get<{ principals: Principal[] }>('/principals', { limit: 500 })).principals : null), [isAdmin]);
  const reload = () => {
    pending.reload();
    approved.reload();
  };
  useEvents(['pairing.requested', 'pairing.decided'], reload);
  if (!allowed) return html`<${Page} name="pairing" title="Pairing"><p>This page needs the "pairing" scope.</p><//>`;
  const list = pending.data ?? [];
  return html`<${Page} name="pairing" title="Pairing">
    <h2>Pending codes</h2>
    <${Loading} when=${pending.loading && !pending.data} />
    <${ErrorNote} error=${pending.error} />
    ${list.length === 0 && pending.data ? html`<${Empty} testid="pairing-empty">No pairing request is waiting.<//>` : null}
    <ul class="cards" data-testid="pairing-pending" aria-live="polite">
      ${list.map((p) => html`<${PendingCode} key=${p.code} request=${p} onDone=${reload} people=${people.data ?? null} />`)}
    </ul>
    <h2>Approved</h2>
    <${ErrorNote} error=${approved.error} />
    ${approved.data && approved.data.length === 0 ? html`<${Empty}>No code has been approved yet.<//>` : null}
    <ul class="plain" data-testid="pairing-approved">
      ${(approved.data ?? []).map(
        (p) => html`<li key=${p.code}>
          <span class="mono">${p.code}</span> · ${p.channel}:${p.account} · ${p.displayName ?? p.identity} · <${Badge} state=${p.status} /> by ${p.decidedBy ?? '—'} ·
          ${formatTime(p.createdAt)}
        </li>`,
      )}
    </ul>
  <//>`;
}
