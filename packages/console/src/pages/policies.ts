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
import { parseFieldValue } from '../policy-view';
import { MODES } from './person';
import { Capabilities, Rules } from './policy-switches';

interface FieldView {
  value: unknown;
  source: 'config' | 'operator';
  updatedBy?: string;
  updatedAt?: string;
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

function ChannelPolicy(props: { channel: string; canEdit: boolean; version: number; onChanged: () => void }) {
  const policy = useAsync(() => api.get<{ fields: Record<string, FieldView> }>(`/channels/${seg(props.channel)}/policy`), [props.channel, props.version]);
  return html`<div data-testid=${`policy-${props.channel}`}>
    <${Loading} when=${policy.loading && !policy.data} />
    <${ErrorNote} error=${policy.error} />
    <div class="table-wrap">
      <table>
        <thead><tr><th>Field</th><th>Value</th><th>Source</th><th>Changed by</th><th></th></tr></thead>
        <tbody>
          ${Object.entries(policy.data?.fields ?? {}).map(
            ([name, view]) =>
              html`<${PolicyField} key=${`${name}:${JSON.stringify(view)}`} channel=${props.channel} name=${name} view=${view} canEdit=${props.canEdit} onChanged=${props.onChanged} />`,
          )}
        </tbody>
      </table>
    </div>
  </div>`;
}

function ChannelMode(props: { channel: string; canEdit: boolean; version: number; onChanged: () => void }) {
  const policy = useAsync(() => api.get<{ fields: Record<string, FieldView> }>(`/channels/${seg(props.channel)}/policy`), [props.channel, props.version]);
  const action = useAction();
  const field = policy.data?.fields.permissionMode;
  const value = typeof field?.value === 'string' ? field.value : '';
  const set = (mode: string) =>
    action.run(() => api.put(`/channels/${seg(props.channel)}/policy`, { permissionMode: mode === '' ? null : mode })).then((ok) => ok && props.onChanged());
  return html`<tr data-testid=${`mode-ceiling-${props.channel}`}>
    <td class="mono">${props.channel}</td>
    <td>
      ${
        props.canEdit && policy.data
          ? html`<select
              aria-label=${`Mode ceiling of ${props.channel}`}
              value=${value}
              disabled=${action.busy}
              onChange=${(e: Event) => set((e.target as HTMLSelectElement).value)}
              data-testid=${`mode-ceiling-select-${props.channel}`}
            >
              <option value="">none (the gateway and roles decide)</option>
              ${MODES.map((m) => html`<option key=${m} value=${m}>${m}</option>`)}
            </select>`
          : html`<span>${value || 'none'}</span>`
      }
      <${ErrorNote} error=${action.error ?? policy.error} testid=${`mode-ceiling-error-${props.channel}`} />
    </td>
    <td>${field ? html`<${Badge} state=${field.source} />` : null}</td>
  </tr>`;
}

/** Policies: each channel account's boundary policy (config vs override, edit, reset), rules by scope, capability switches, mode ceilings. */
export function PoliciesPage(props: { session: ConsoleSession }) {
  const canRead = hasScope(props.session, 'read');
  const isAdmin = hasScope(props.session, 'admin');
  const channels = useAsync(async () => (canRead ? (await api.get<{ channels: ChannelInfo[] }>('/channels')).channels : []), [canRead]);
  const [picked, setPicked] = useState<string | null>(null);
  const channel = picked ?? channels.data?.[0]?.id ?? null;
  // Both views of a channel's policy (its fields, the mode ceilings) read again after either changes it.
  const [version, setVersion] = useState(0);
  const changed = () => setVersion((v) => v + 1);
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
    ${channel ? html`<${ChannelPolicy} key=${channel} channel=${channel} canEdit=${isAdmin} version=${version} onChanged=${changed} />` : null}

    <h2>Mode ceilings</h2>
    <p class="muted small">
      The most trusted permission mode per channel account (its <span class="mono">permissionMode</span>); narrower scopes may lower it, never raise it. Each role's
      ceiling is the configuration's <span class="mono">permissions.roleCeilings</span>; a person's own mode is set on their page.
    </p>
    <div class="table-wrap">
      <table data-testid="mode-ceilings">
        <thead><tr><th>Channel account</th><th>Mode ceiling</th><th>Source</th></tr></thead>
        <tbody>
          ${(channels.data ?? []).map((c) => html`<${ChannelMode} key=${c.id} channel=${c.id} canEdit=${isAdmin} version=${version} onChanged=${changed} />`)}
        </tbody>
      </table>
    </div>

    <h2>Permission rules</h2>
    <p class="muted small">Stored rules at a scope (operators' rules and "always allow" answers); rules in the configuration file are not listed here.</p>
    <${Rules} canEdit=${isAdmin} />

    <h2>Capability switches</h2>
    <p class="muted small">Switch a tool or skill off (a deny rule) or on (an offer-switch) for an agent, a role, a channel or anyone else at a scope.</p>
    <${Capabilities} canEdit=${isAdmin} />
  <//>`;
}
