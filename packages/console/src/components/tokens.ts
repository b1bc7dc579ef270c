import { useState } from 'preact/hooks';
import { seg } from '../api';
import { api } from '../context';
import { formatRelative, formatTime } from '../format';
import { html } from '../html';
import { useAction } from '../hooks';
import type { TokenRecord } from '../types';
import { Badge, ConfirmButton, ErrorNote } from './ui';

/** A token secret, shown once right after it was created; the page keeps it only until dismissed. */
export function SecretOnce(props: { secret: string | null; onDismiss: () => void }) {
  if (!props.secret) return null;
  return html`<div class="secret" role="status" data-testid="token-secret-box">
    <p><strong>Copy this token now: it is shown only once.</strong></p>
    <pre data-testid="token-secret">${props.secret}</pre>
    <button type="button" onClick=${props.onDismiss} data-testid="token-secret-dismiss">I have copied it</button>
  </div>`;
}

/** A table of tokens with a revoke button per live token. */
export function TokenTable(props: {
  tokens: Array<Partial<TokenRecord> & { id: string; name: string | null; createdAt: string; revokedAt: string | null }>;
  canRevoke: boolean;
  onChanged: () => void;
  testid: string;
}) {
  const action = useAction();
  return html`<div class="table-wrap">
    <${ErrorNote} error=${action.error} testid=${`${props.testid}-error`} />
    <table data-testid=${props.testid}>
      <thead><tr><th>Name</th><th>Scopes</th><th>Created</th><th>Last used</th><th>Expires</th><th>State</th><th></th></tr></thead>
      <tbody>
        ${props.tokens.map(
          (t) => html`<tr key=${t.id} data-testid=${`token-${t.id}`}>
            <td>${t.name ?? t.id}</td>
            <td class="mono small">${(t.scopes ?? []).join(', ')}</td>
            <td class="nowrap">${formatTime(t.createdAt)}</td>
            <td class="nowrap">${t.lastUsedAt ? formatRelative(t.lastUsedAt) : '—'}</td>
            <td class="nowrap">${t.expiresAt ? formatTime(t.expiresAt) : '—'}</td>
            <td><${Badge} state=${t.revokedAt ? 'revoked' : 'active'} /></td>
            <td>
              ${
                props.canRevoke && !t.revokedAt
                  ? html`<${ConfirmButton}
                      label="Revoke"
                      danger=${true}
                      testid=${`token-revoke-${t.id}`}
                      disabled=${action.busy}
                      onConfirm=${() => action.run(() => api.del(`/tokens/${seg(t.id)}`)).then((ok) => ok && props.onChanged())}
                    />`
                  : null
              }
            </td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** Form state helper: a controlled text input's onInput. */
export function useField(initial = ''): [string, (e: Event) => void, (v: string) => void] {
  const [value, setValue] = useState(initial);
  return [value, (e: Event) => setValue((e.target as HTMLInputElement).value), setValue];
}
