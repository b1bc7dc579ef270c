import { useState } from 'preact/hooks';
import { seg } from '../api';
import { SecretOnce, TokenTable, useField } from '../components/tokens';
import { ConfirmButton, ErrorNote, Link, Loading, Page } from '../components/ui';
import { api, navigate } from '../context';
import { budgetText, formatCount, formatTime, formatUsd, utcDay } from '../format';
import { html } from '../html';
import { useAction, useAsync } from '../hooks';
import { type ConsoleSession, hasScope } from '../session';
import type { BudgetLimits, Budgets, Principal, UsageAnswer } from '../types';
import { tokensOf } from '../usage-data';
import { limitOf } from '../policy-view';
import { ROLES } from './people';

export const MODES = ['plan', 'dontAsk', 'default', 'acceptEdits', 'bypassPermissions'] as const;

type PrincipalAnswer = { principal: Principal; tokens: Array<{ id: string; name: string | null; createdAt: string; revokedAt: string | null }> };

function BudgetForm(props: { id: string; current: BudgetLimits | undefined; onSaved: () => void }) {
  const c = props.current ?? {};
  const [dayTokens, onDayTokens] = useField(c.day?.tokens?.toString() ?? '');
  const [dayUsd, onDayUsd] = useField(c.day?.usd?.toString() ?? '');
  const [monthTokens, onMonthTokens] = useField(c.month?.tokens?.toString() ?? '');
  const [monthUsd, onMonthUsd] = useField(c.month?.usd?.toString() ?? '');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    action
      .run(async () => {
        const day = limitOf(dayTokens, dayUsd);
        const month = limitOf(monthTokens, monthUsd);
        await api.put(`/budgets/principal/${seg(props.id)}`, { ...(day ? { day } : {}), ...(month ? { month } : {}) });
      })
      .then((ok) => ok && props.onSaved());
  };
  return html`<form class="filters" onSubmit=${submit} data-testid="budget-form">
    <label class="field"><span>Day tokens</span><input type="number" min="1" value=${dayTokens} onInput=${onDayTokens} data-testid="budget-day-tokens" /></label>
    <label class="field"><span>Day USD</span><input type="number" min="0" step="0.01" value=${dayUsd} onInput=${onDayUsd} data-testid="budget-day-usd" /></label>
    <label class="field"><span>Month tokens</span><input type="number" min="1" value=${monthTokens} onInput=${onMonthTokens} data-testid="budget-month-tokens" /></label>
    <label class="field"><span>Month USD</span><input type="number" min="0" step="0.01" value=${monthUsd} onInput=${onMonthUsd} data-testid="budget-month-usd" /></label>
    <button type="submit" disabled=${action.busy} data-testid="budget-save">Save budget</button>
    <${ErrorNote} error=${action.error} testid="budget-error" />
  </form>`;
}

function LinkIdentity(props: { id: string; onLinked: () => void }) {
  const [channelType, onType, setType] = useField('telegram');
  const [externalId, onExt, setExt] = useField();
  const action = useAction();
  return html`<form
    class="filters"
    data-testid="identity-link"
    onSubmit=${(e: Event) => {
      e.preventDefault();
      action
        .run(() => api.post(`/principals/${seg(props.id)}/identities`, { channelType: channelType.trim(), externalId: externalId.trim() }))
        .then((ok) => {
          if (ok) {
            setExt('');
            setType('telegram');
            props.onLinked();
          }
        });
    }}
  >
    <label class="field"><span>Channel type</span><input type="text" required value=${channelType} onInput=${onType} data-testid="identity-channel-type" /></label>
    <label class="field"><span>External id</span><input type="text" required maxlength="200" value=${externalId} onInput=${onExt} data-testid="identity-external-id" /></label>
    <button type="submit" disabled=${action.busy} data-testid="identity-link-submit">Link identity</button>
    <${ErrorNote} error=${action.error} testid="identity-link-error" />
  </form>`;
}

/** One person: name and role, identities (link/unlink), client tokens (create once-shown secret, revoke), mode, budget and usage. */
export function PersonPage(props: { session: ConsoleSession; id: string }) {
  const isAdmin = hasScope(props.session, 'admin');
  const data = useAsync(() => api.get<PrincipalAnswer>(`/principals/${seg(props.id)}`), [props.id]);
  const budgets = useAsync(() => api.get<Budgets>('/budgets'), []);
  const mode = useAsync(() => api.get<{ mode: string | null }>(`/principals/${seg(props.id)}/mode`), [props.id]);
  const now = new Date();
  const monthStart = `${utcDay(now).slice(0, 8)}01`;
  const usage = useAsync(() => api.get<UsageAnswer>('/usage', { principal: props.id, from: monthStart, to: utcDay(now) }), [props.id]);
  const [secret, setSecret] = useState<string | null>(null);
  const [role, setRole] = useState<string | null>(null);
  const [newName, setNewName] = useState<string | null>(null);
  const action = useAction();
  const p = data.data?.principal;
  const today = usage.data?.days.find((d) => d.day === utcDay(now));
  const budget = budgets.data?.principals[props.id];

  const save = (e: Event) => {
    e.preventDefault();
    if (!p) return;
    const body: Record<string, string> = {};
    if (newName !== null && newName.trim() !== p.name) body.name = newName.trim();
    if (role !== null && role !== p.role) body.role = role;
    if (Object.keys(body).length === 0) return;
    action
      .run(() => api.patch(`/principals/${seg(p.id)}`, body))
      .then((ok) => {
        if (ok) {
          setRole(null);
          setNewName(null);
          data.reload();
        }
      });
  };

  const actions =
    p && isAdmin
      ? html`<${ConfirmButton}
        label="Delete person"
        danger=${true}
        testid="person-delete"
        disabled=${action.busy}
        onConfirm=${() => action.run(() => api.del(`/principals/${seg(p.id)}`)).then((ok) => ok && navigate('/people'))}
      />`
      : null;

  return html`<${Page} name="person" title=${p ? p.name : 'Person'} actions=${actions}>
    <p><${Link} to="/people">← All people<//> · <${Link} to=${`/sessions`}>Sessions<//></p>
    <${Loading} when=${data.loading && !data.data} />
    <${ErrorNote} error=${data.error} />
    <${ErrorNote} error=${action.error} testid="person-error" />
    ${
      p
        ? html`
          <form class="filters card" onSubmit=${save} data-testid="person-edit">
            <label class="field"><span>Name</span><input type="text" value=${newName ?? p.name} disabled=${!isAdmin} onInput=${(e: Event) => setNewName((e.target as HTMLInputElement).value)} data-testid="person-name" /></label>
            <label class="field">
              <span>Role</span>
              <select value=${role ?? p.role} disabled=${!isAdmin} onChange=${(e: Event) => setRole((e.target as HTMLSelectElement).value)} data-testid="person-role">
                ${ROLES.map((r) => html`<option key=${r} value=${r}>${r}</option>`)}
              </select>
            </label>
            ${isAdmin ? html`<button type="submit" disabled=${action.busy} data-testid="person-save">Save</button>` : null}
            <span class="muted small">id <span class="mono">${p.id}</span> · since ${formatTime(p.createdAt)}</span>
          </form>

          <h2>Identities</h2>
          <ul class="plain" data-testid="person-identities">
            ${p.identities.map(
              (i) => html`<li key=${i.id} class="row">
                <span class="mono">${i.channelType}:${i.externalId}</span>
                ${
                  isAdmin
                    ? html`<${ConfirmButton}
                        label="Unlink"
                        testid=${`identity-unlink-${i.id}`}
                        onConfirm=${() => action.run(() => api.del(`/principals/${seg(p.id)}/identities/${seg(i.id)}`)).then((ok) => ok && data.reload())}
                      />`
                    : null
                }
              </li>`,
            )}
          </ul>
          ${isAdmin ? html`<${LinkIdentity} id=${p.id} onLinked=${data.reload} />` : null}

          <h2>Client tokens</h2>
          <${SecretOnce} secret=${secret} onDismiss=${() => setSecret(null)} />
          ${
            isAdmin
              ? html`<button
                  type="button"
                  class="primary"
                  disabled=${action.busy}
                  data-testid="client-token-create"
                  onClick=${() => {
                    let s = '';
                    action
                      .run(async () => {
                        s = (await api.post<{ secret: string }>('/tokens', { kind: 'client', principalId: p.id })).secret;
                      })
                      .then((ok) => {
                        if (ok) {
                          setSecret(s);
                          data.reload();
                        }
                      });
                  }}
                >
                  Create client token
                </button>`
              : null
          }
          <${TokenTable} tokens=${data.data?.tokens ?? []} canRevoke=${isAdmin} onChanged=${data.reload} testid="client-tokens" />

          <h2>Permission mode</h2>
          <${ErrorNote} error=${mode.error} />
          <p class="row">
            <span data-testid="person-mode">${mode.data ? (mode.data.mode ?? 'not set (the role and scopes decide)') : '—'}</span>
            ${
              isAdmin
                ? html`<select
                    aria-label="Set the permission mode"
                    value=${mode.data?.mode ?? ''}
                    data-testid="person-mode-select"
                    onChange=${(e: Event) => {
                      const v = (e.target as HTMLSelectElement).value;
                      action.run(() => api.put(`/principals/${seg(p.id)}/mode`, { mode: v === '' ? null : v })).then(() => mode.reload());
                    }}
                  >
                    <option value="">not set</option>
                    ${MODES.map((m) => html`<option key=${m} value=${m}>${m}</option>`)}
                  </select>`
                : null
            }
          </p>

          <h2>Budget and usage</h2>
          <p data-testid="person-budget">Budget: ${budgetText(budget)}</p>
          <p data-testid="person-usage">
            ${`Today: ${formatCount(today ? tokensOf(today) : 0)} tokens, ${formatUsd(today?.costUsd ?? 0)} · this month: ${formatCount(usage.data ? tokensOf(usage.data.totals) : 0)} tokens, ${formatUsd(usage.data?.totals.costUsd ?? 0)} (${formatCount(usage.data?.totals.calls ?? 0)} model calls)`}
          </p>
          ${isAdmin && budgets.data ? html`<${BudgetForm} key=${JSON.stringify(budget ?? {})} id=${p.id} current=${budget} onSaved=${budgets.reload} />` : null}
        `
        : null
    }
  <//>`;
}
