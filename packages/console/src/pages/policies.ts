import { useState } from 'preact/hooks';
import { seg } from '../api';
import { useField } from '../components/tokens';
import { Badge, ConfirmButton, ErrorNote, Loading, Page } from '../components/ui';
import { api } from '../context';
import { formatTime } from '../format';
import { html } from '../html';
import { useAction, useAsync } from '../hooks';
import { type ConsoleSession, hasScope } from '../session';
import type { ChannelInfo } from '../types';
import { MODES } from './person';
import { ROLES } from './people';

interface FieldView {
  value: unknown;
  source: 'config' | 'operator';
  updatedBy?: string;
  updatedAt?: string;
}

interface StoredRule {
  id: string;
  scope: { kind: string; id?: string };
  behavior: 'allow' | 'ask' | 'deny';
  rule: string;
  source: string;
  createdBy: string;
  createdAt: string;
}

interface Capability {
  id: string;
  kind: string;
  source: string;
  description?: string;
  offeredTo?: string[];
  enabledAt?: Array<{ kind: string; id?: string }>;
  disabledAt?: Array<{ kind: string; id?: string; ruleId?: string }>;
}

export const SCOPE_KINDS = ['gateway', 'agent', 'channel', 'conversation', 'role', 'principal', 'session'] as const;

/** A JSON field edit: the parsed value, or an error naming the field. */
export function parseFieldValue(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${field}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** Whether a scope list holds exactly this scope. */
export function atScope(list: Array<{ kind: string; id?: string }> | undefined, kind: string, id: string | undefined): boolean {
  return (list ?? []).some((s) => s.kind === kind && (kind === 'gateway' ? true : s.id === id));
}

function PolicyField(props: { channel: string; name: string; view: FieldView; canEdit: boolean; onChanged: () => void }) {
  const { view } = props;
  const [editing, setEditing] = useState(false);
  const [text, onText, setText] = useField(JSON.stringify(view.value, null, 2) ?? 'null');
  const action = useAction();
  const save = () =>
    action
      .run(() => api.put(`/channels/${seg(props.channel)}/policy`, { [props.name]: parseFieldValue(props.name, text) }))
      .then((ok) => {
        if (ok) {
          setEditing(false);
          props.onChanged();
        }
      });
  return html`<tr data-testid=${`policy-field-${props.name}`}>
    <td class="mono">${props.name}</td>
    <td>
      ${
        editing
          ? html`<textarea rows="3" cols="30" value=${text} onInput=${onText} aria-label=${`New value of ${props.name}`} data-testid=${`policy-input-${props.name}`}></textarea>`
          : html`<code class="detail">${JSON.stringify(view.value)}</code>`
      }
      <${ErrorNote} error=${action.error} testid=${`policy-error-${props.name}`} />
    </td>
    <td><${Badge} state=${view.source} testid=${`policy-source-${props.name}`} /></td>
    <td class="small">${view.updatedBy ? `${view.updatedBy}, ${formatTime(view.updatedAt)}` : '—'}</td>
    <td>
      ${
        props.canEdit
          ? editing
            ? html`<span class="buttons">
                <button type="button" class="primary" disabled=${action.busy} onClick=${save} data-testid=${`policy-save-${props.name}`}>Save</button>
                <button
                  type="button"
                  onClick=${() => {
                    setEditing(false);
                    setText(JSON.stringify(view.value, null, 2) ?? 'null');
                  }}
                >
                  Cancel
                </button>
              </span>`
            : html`<span class="buttons">
                <button type="button" onClick=${() => setEditing(true)} data-testid=${`policy-edit-${props.name}`}>Edit</button>
                ${
                  view.source === 'operator'
                    ? html`<${ConfirmButton}
                        label="Reset to config"
                        testid=${`policy-reset-${props.name}`}
                        onConfirm=${() => action.run(() => api.del(`/channels/${seg(props.channel)}/policy/${seg(props.name)}`)).then((ok) => ok && props.onChanged())}
                      />`
                    : null
                }
              </span>`
          : null
      }
    </td>
  </tr>`;
}

function ChannelPolicy(props: { channel: string; canEdit: boolean }) {
  const policy = useAsync(() => api.get<{ fields: Record<string, FieldView> }>(`/channels/${seg(props.channel)}/policy`), [props.channel]);
  return html`<div data-testid=${`policy-${props.channel}`}>
    <${Loading} when=${policy.loading && !policy.data} />
    <${ErrorNote} error=${policy.error} />
    <div class="table-wrap">
      <table>
        <thead><tr><th>Field</th><th>Value</th><th>Source</th><th>Changed by</th><th></th></tr></thead>
        <tbody>
          ${Object.entries(policy.data?.fields ?? {}).map(
            ([name, view]) =>
              html`<${PolicyField} key=${`${name}:${JSON.stringify(view)}`} channel=${props.channel} name=${name} view=${view} canEdit=${props.canEdit} onChanged=${policy.reload} />`,
          )}
        </tbody>
      </table>
    </div>
  </div>`;
}

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

function Rules(props: { canEdit: boolean }) {
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

function Capabilities(props: { canEdit: boolean }) {
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
            const off = atScope(c.disabledAt, kind, id.trim());
            const switchedOn = atScope(c.enabledAt, kind, id.trim());
            return html`<tr key=${c.id} data-testid=${`capability-${c.id}`} data-state=${off ? 'off' : 'on'}>
              <td><span class="mono">${c.id}</span> <span class="muted small">${c.description ?? ''}</span></td>
              <td class="small">${c.kind === 'skill' ? 'every role' : (c.offeredTo ?? []).join(', ')}</td>
              <td><${Badge} state=${off ? 'off' : switchedOn ? 'on' : 'default'} testid=${`capability-state-${c.id}`} /></td>
              <td>
                ${
                  props.canEdit && ready
                    ? html`<button type="button" disabled=${action.busy} onClick=${() => toggle(c, off)} data-testid=${`capability-toggle-${c.id}`}>
                        ${off ? 'Switch on' : 'Switch off'}
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

/** Policies: each channel account's boundary policy (config vs override, edit, reset), rules by scope, capability switches, mode ceilings. */
export function PoliciesPage(props: { session: ConsoleSession }) {
  const canRead = hasScope(props.session, 'read');
  const isAdmin = hasScope(props.session, 'admin');
  const channels = useAsync(async () => (canRead ? (await api.get<{ channels: ChannelInfo[] }>('/channels')).channels : []), [canRead]);
  const [picked, setPicked] = useState<string | null>(null);
  const channel = picked ?? channels.data?.[0]?.id ?? null;
  if (!canRead) return html`<${Page} name="policies" title="Policies"><p>This page needs the "read" scope.</p><//>`;
  return html`<${Page} name="policies" title="Policies">
    <h2>Channel boundary policies</h2>
    <p class="muted small">
      Each field shows the value in force: <strong>config</strong> from the configuration file, or an <strong>operator</strong> override (who, when). Reset returns a
      field to the config value. <span class="mono">permissionMode</span> is the account's mode ceiling (one of ${MODES.join(', ')}).
    </p>
    <${ErrorNote} error=${channels.error} />
    <div class="filters">
      <label class="field">
        <span>Channel account</span>
        <select value=${channel ?? ''} onChange=${(e: Event) => setPicked((e.target as HTMLSelectElement).value)} data-testid="policy-channel">
          ${(channels.data ?? []).map((c) => html`<option key=${c.id} value=${c.id}>${c.id}</option>`)}
        </select>
      </label>
    </div>
    ${channel ? html`<${ChannelPolicy} key=${channel} channel=${channel} canEdit=${isAdmin} />` : null}

    <h2>Permission rules</h2>
    <p class="muted small">Stored rules at a scope (operators' rules and "always allow" answers); rules in the configuration file are not listed here.</p>
    <${Rules} canEdit=${isAdmin} />

    <h2>Capability switches</h2>
    <p class="muted small">Switch a tool or skill off (a deny rule) or on (an offer-switch) for an agent, a role, a channel or anyone else at a scope.</p>
    <${Capabilities} canEdit=${isAdmin} />
  <//>`;
}
