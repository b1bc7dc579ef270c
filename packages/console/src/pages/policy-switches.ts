import { useState } from 'preact/hooks';
import { seg } from '../api';
import { useField } from '../components/tokens';
import { Badge, ConfirmButton, ErrorNote } from '../components/ui';
import { api } from '../context';
import { formatTime } from '../format';
import { html } from '../html';
import { useAction, useAsync } from '../hooks';
import { type Capability, capabilityState, firstSentence } from '../policy-view';
import { ROLES } from './people';

/** Permission rules by scope and capability switches: the lower half of the Policies page. */

interface StoredRule {
  id: string;
  scope: { kind: string; id?: string };
  behavior: 'allow' | 'ask' | 'deny';
  rule: string;
  source: string;
  createdBy: string;
  createdAt: string;
}

export const SCOPE_KINDS = ['gateway', 'agent', 'channel', 'conversation', 'role', 'principal', 'session'] as const;

function ScopePicker(props: { kind: string; id: string; onKind: (k: string) => void; onId: (id: string) => void; testid: string }) {
  return html`<span class="filters">
    <label class="field">
      <span>Scope</span>
      <select value=${props.kind} onChange=${(e: Event) => props.onKind((e.target as HTMLSelectElement).value)} data-testid=${`${props.testid}-kind`}>
        ${SCOPE_KINDS.map((k) => html`<option key=${k} value=${k}>${k}</option>`)}
      </select>
    </label>
    ${
      props.kind === 'gateway'
        ? null
        : props.kind === 'role'
          ? html`<label class="field">
              <span>Role</span>
              <select value=${props.id} onChange=${(e: Event) => props.onId((e.target as HTMLSelectElement).value)} data-testid=${`${props.testid}-id`}>
                <option value="">choose</option>
                ${ROLES.map((r) => html`<option key=${r} value=${r}>${r}</option>`)}
              </select>
            </label>`
          : html`<label class="field">
              <span>${props.kind} id</span>
              <input type="text" maxlength="300" value=${props.id} onInput=${(e: Event) => props.onId((e.target as HTMLInputElement).value)} data-testid=${`${props.testid}-id`} />
            </label>`
    }
  </span>`;
}

const scopeBody = (kind: string, id: string) => (kind === 'gateway' ? { kind } : { kind, id: id.trim() });

export function Rules(props: { canEdit: boolean }) {
  const [kind, setKind] = useState('gateway');
  const [id, setId] = useState('');
  const [behavior, setBehavior] = useState('ask');
  const [rule, onRule, setRule] = useField();
  const filterId = kind === 'gateway' ? undefined : id.trim() || undefined;
  const rules = useAsync(
    async () => (await api.get<{ rules: StoredRule[] }>('/rules', { scopeKind: kind, scopeId: filterId, limit: 500 })).rules,
    [kind, filterId],
  );
  const action = useAction();
  return html`<div data-testid="rules">
    <form
      class="filters card"
      data-testid="rule-create"
      onSubmit=${(e: Event) => {
        e.preventDefault();
        action
          .run(() => api.post('/rules', { scope: scopeBody(kind, id), behavior, rule: rule.trim() }))
          .then((ok) => {
            if (ok) {
              setRule('');
              rules.reload();
            }
          });
      }}
    >
      <${ScopePicker}
        kind=${kind}
        id=${id}
        onKind=${(k: string) => {
          setKind(k);
          setId('');
        }}
        onId=${setId}
        testid="rule-scope"
      />
      ${
        props.canEdit
          ? html`<label class="field">
                <span>Behavior</span>
                <select value=${behavior} onChange=${(e: Event) => setBehavior((e.target as HTMLSelectElement).value)} data-testid="rule-behavior">
                  <option value="allow">allow</option>
                  <option value="ask">ask</option>
                  <option value="deny">deny</option>
                </select>
              </label>
              <label class="field"><span>Rule</span><input type="text" required maxlength="500" placeholder="Tool(content)" value=${rule} onInput=${onRule} data-testid="rule-text" /></label>
              <button type="submit" class="primary" disabled=${action.busy} data-testid="rule-submit">Add rule</button>`
          : null
      }
    </form>
    <${ErrorNote} error=${action.error} testid="rule-error" />
    <${ErrorNote} error=${rules.error} />
    <div class="table-wrap">
      <table data-testid="rules-table">
        <thead><tr><th>Scope</th><th>Behavior</th><th>Rule</th><th>Source</th><th>Created</th><th></th></tr></thead>
        <tbody>
          ${(rules.data ?? []).map(
            (r) => html`<tr key=${r.id} data-testid=${`rule-${r.id}`}>
              <td class="mono small">${r.scope.kind}${r.scope.id ? `:${r.scope.id}` : ''}</td>
              <td><${Badge} state=${r.behavior} /></td>
              <td class="mono">${r.rule}</td>
              <td class="small">${r.createdBy}</td>
              <td class="nowrap small">${formatTime(r.createdAt)}</td>
              <td>
                ${
                  props.canEdit
                    ? html`<${ConfirmButton}
                        label="Delete"
                        danger=${true}
                        testid=${`rule-delete-${r.id}`}
                        onConfirm=${() => action.run(() => api.del(`/rules/${seg(r.id)}`)).then((ok) => ok && rules.reload())}
                      />`
                    : null
                }
              </td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </div>`;
}

export function Capabilities(props: { canEdit: boolean }) {
  const [kind, setKind] = useState('role');
  const [id, setId] = useState('member');
  const caps = useAsync(
    async () => (await api.get<{ capabilities: Capability[] }>('/capabilities')).capabilities.filter((c) => c.kind === 'tool' || c.kind === 'skill'),
    [],
  );
  const action = useAction();
  const ready = kind === 'gateway' || id.trim() !== '';
  const toggle = (c: Capability, enabled: boolean) =>
    action.run(() => api.put(`/capabilities/${seg(c.id)}`, { scope: scopeBody(kind, id), enabled })).then((ok) => ok && caps.reload());
  return html`<div data-testid="capabilities">
    <div class="filters">
      <${ScopePicker}
        kind=${kind}
        id=${id}
        onKind=${(k: string) => {
          setKind(k);
          setId('');
        }}
        onId=${setId}
        testid="capability-scope"
      />
    </div>
    <${ErrorNote} error=${action.error} testid="capability-error" />
    <${ErrorNote} error=${caps.error} />
    <div class="table-wrap">
      <table data-testid="capabilities-table">
        <thead><tr><th>Capability</th><th>Offered to</th><th>At this scope</th><th></th></tr></thead>
        <tbody>
          ${(caps.data ?? []).map((c) => {
            const st = capabilityState(c, kind, id.trim());
            return html`<tr key=${c.id} data-testid=${`capability-${c.id}`} data-state=${st.on === false ? 'off' : 'on'}>
              <td><span class="mono">${c.id}</span> <span class="muted small">${firstSentence(c.description ?? '')}</span></td>
              <td class="small">${c.kind === 'skill' ? 'every role' : (c.offeredTo ?? []).join(', ')}</td>
              <td><${Badge} state=${st.label} testid=${`capability-state-${c.id}`} /></td>
              <td>
                ${
                  props.canEdit && ready
                    ? html`<button type="button" disabled=${action.busy} onClick=${() => toggle(c, st.on === false)} data-testid=${`capability-toggle-${c.id}`}>
                        ${st.on === false ? 'Switch on' : 'Switch off'}
                      </button>`
                    : null
                }
              </td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>
  </div>`;
}
