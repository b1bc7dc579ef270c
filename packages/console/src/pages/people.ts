import { useState } from 'preact/hooks';
import { SecretOnce, TokenTable, useField } from '../components/tokens';
import { Empty, ErrorNote, Link, Loading, Page } from '../components/ui';
import { api, navigate } from '../context';
import { budgetText, formatCount, formatTime, formatUsd, utcDay } from '../format';
import { html } from '../html';
import { useAction, useAsync } from '../hooks';
import { pathFor } from '../router';
import { type ConsoleSession, hasScope } from '../session';
import type { Budgets, Principal, TokenRecord, UsageAnswer, UsageFigures } from '../types';
import { tokensOf } from '../usage-data';

export const ROLES = ['guest', 'member', 'admin', 'owner'] as const;
export const OPERATOR_SCOPES = ['read', 'write', 'admin', 'approvals', 'pairing'] as const;

function monthText(t: UsageFigures | undefined): string {
  return t ? `${formatCount(tokensOf(t), true)} tokens · ${formatUsd(t.costUsd)}` : '—';
}

function CreatePrincipal(props: { onCreated: (p: Principal) => void }) {
  const [name, onName, setName] = useField();
  const [role, setRole] = useState('member');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    let created: Principal | null = null;
    action
      .run(async () => {
        created = (await api.post<{ principal: Principal }>('/principals', { name: name.trim(), role })).principal;
      })
      .then((ok) => {
        if (ok && created) {
          setName('');
          props.onCreated(created);
        }
      });
  };
  return html`<form class="filters card" onSubmit=${submit} data-testid="principal-create">
    <label class="field"><span>Name</span><input type="text" required maxlength="64" value=${name} onInput=${onName} data-testid="principal-create-name" /></label>
    <label class="field">
      <span>Role</span>
      <select value=${role} onChange=${(e: Event) => setRole((e.target as HTMLSelectElement).value)} data-testid="principal-create-role">
        ${ROLES.map((r) => html`<option key=${r} value=${r}>${r}</option>`)}
      </select>
    </label>
    <button type="submit" class="primary" disabled=${action.busy} data-testid="principal-create-submit">Add person</button>
    <${ErrorNote} error=${action.error} testid="principal-create-error" />
  </form>`;
}

function CreateOperatorToken(props: { session: ConsoleSession; onCreated: (secret: string) => void }) {
  const [name, onName, setName] = useField();
  const [expires, onExpires] = useField();
  const [scopes, setScopes] = useState<string[]>(['read']);
  const action = useAction();
  const mine = hasScope(props.session, 'admin') ? [...OPERATOR_SCOPES] : OPERATOR_SCOPES.filter((s) => props.session.scopes.includes(s));
  const toggle = (s: string) => setScopes(scopes.includes(s) ? scopes.filter((x) => x !== s) : [...scopes, s]);
  const submit = (e: Event) => {
    e.preventDefault();
    let secret = '';
    action
      .run(async () => {
        const expiresAt = expires ? new Date(`${expires}:00Z`).toISOString() : undefined;
        secret = (await api.post<{ secret: string }>('/tokens', { kind: 'operator', name: name.trim(), scopes, ...(expiresAt ? { expiresAt } : {}) })).secret;
      })
      .then((ok) => {
        if (ok) {
          setName('');
          props.onCreated(secret);
        }
      });
  };
  return html`<form class="filters card" onSubmit=${submit} data-testid="operator-token-create">
    <label class="field"><span>Name</span><input type="text" required maxlength="64" value=${name} onInput=${onName} data-testid="operator-token-name" /></label>
    <fieldset class="check-group">
      <legend>Scopes</legend>
      ${mine.map(
        (s) => html`<label key=${s} class="check">
          <input type="checkbox" checked=${scopes.includes(s)} onChange=${() => toggle(s)} data-testid=${`operator-token-scope-${s}`} /> ${s}
        </label>`,
      )}
    </fieldset>
    <label class="field"><span>Expires (UTC, optional)</span><input type="datetime-local" value=${expires} onInput=${onExpires} data-testid="operator-token-expires" /></label>
    <button type="submit" class="primary" disabled=${action.busy || scopes.length === 0} data-testid="operator-token-submit">Create operator token</button>
    <${ErrorNote} error=${action.error} testid="operator-token-error" />
  </form>`;
}

/** People: principals with roles and identities, per-person budgets; operator tokens (create shows the secret once; revoke). */
export function PeoplePage(props: { session: ConsoleSession }) {
  const canRead = hasScope(props.session, 'read');
  const isAdmin = hasScope(props.session, 'admin');
  const canWrite = hasScope(props.session, 'write');
  const people = useAsync(async () => (canRead ? (await api.get<{ principals: Principal[] }>('/principals', { limit: 500 })).principals : []), [canRead]);
  const budgets = useAsync(async () => (canRead ? api.get<Budgets>('/budgets') : null), [canRead]);
  // This month's use per person (one usage query each; the Usage page charts it per day).
  const usage = useAsync(async () => {
    const list = (people.data ?? []).slice(0, 100);
    const now = new Date();
    const q = { from: `${utcDay(now).slice(0, 8)}01`, to: utcDay(now) };
    const answers = await Promise.all(list.map(async (p) => [p.id, (await api.get<UsageAnswer>('/usage', { ...q, principal: p.id })).totals] as const));
    return new Map(answers);
  }, [people.data]);
  const tokens = useAsync(
    async () => (canRead ? (await api.get<{ tokens: TokenRecord[] }>('/tokens', { kind: 'operator', limit: 500 })).tokens : []),
    [canRead],
  );
  const [secret, setSecret] = useState<string | null>(null);
  if (!canRead) return html`<${Page} name="people" title="People"><p>This page needs the "read" scope.</p><//>`;
  return html`<${Page} name="people" title="People">
    ${isAdmin ? html`<${CreatePrincipal} onCreated=${(p: Principal) => navigate(pathFor('person', p.id))} />` : null}
    <${Loading} when=${people.loading && !people.data} />
    <${ErrorNote} error=${people.error} />
    ${people.data && people.data.length === 0 ? html`<${Empty}>No people yet.<//>` : null}
    <div class="table-wrap">
      <table data-testid="people-table">
        <thead><tr><th>Name</th><th>Role</th><th>Identities</th><th>Budget</th><th>This month</th><th>Since</th></tr></thead>
        <tbody>
          ${(people.data ?? []).map(
            (p) => html`<tr key=${p.id} data-testid=${`person-row-${p.id}`}>
              <td><${Link} to=${pathFor('person', p.id)} testid=${`person-link-${p.id}`}>${p.name}<//></td>
              <td>${p.role}</td>
              <td class="small">${p.identities.length === 0 ? '—' : p.identities.map((i) => `${i.channelType}:${i.externalId}`).join(', ')}</td>
              <td class="small">${budgetText(budgets.data?.principals[p.id])}</td>
              <td class="small nowrap" data-testid=${`person-month-${p.id}`}>${monthText(usage.data?.get(p.id))}</td>
              <td class="nowrap">${formatTime(p.createdAt)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>

    <h2>Operator tokens</h2>
    <${SecretOnce} secret=${secret} onDismiss=${() => setSecret(null)} />
    ${
      canWrite
        ? html`<${CreateOperatorToken}
            session=${props.session}
            onCreated=${(s: string) => {
              setSecret(s);
              tokens.reload();
            }}
          />`
        : null
    }
    <${ErrorNote} error=${tokens.error} />
    <${TokenTable} tokens=${tokens.data ?? []} canRevoke=${canWrite} onChanged=${tokens.reload} testid="operator-tokens" />
  <//>`;
}
