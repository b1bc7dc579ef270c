import { useState } from 'preact/hooks';
import { Badge, Empty, ErrorNote, Link, Loading, Page } from '../components/ui';
import { api } from '../context';
import { formatRelative } from '../format';
import { html } from '../html';
import { useAsync } from '../hooks';
import { pathFor } from '../router';
import { type ConsoleSession, hasScope } from '../session';
import type { ChannelInfo, Principal, SessionInfo } from '../types';

const PAGE_SIZE = 50;

/** Sessions by person and channel, most recently active first. */
export function SessionsPage(props: { session: ConsoleSession }) {
  const allowed = hasScope(props.session, 'read');
  const [principalId, setPrincipalId] = useState('');
  const [channel, setChannel] = useState('');
  const [offset, setOffset] = useState(0);
  const people = useAsync(async () => (allowed ? (await api.get<{ principals: Principal[] }>('/principals')).principals : []), [allowed]);
  const channels = useAsync(async () => (allowed ? (await api.get<{ channels: ChannelInfo[] }>('/channels')).channels : []), [allowed]);
  const list = useAsync(
    async () =>
      allowed
        ? (
            await api.get<{ sessions: SessionInfo[] }>('/sessions', {
              principalId: principalId || undefined,
              channel: channel || undefined,
              limit: PAGE_SIZE,
              offset,
            })
          ).sessions
        : [],
    [allowed, principalId, channel, offset],
  );
  if (!allowed) return html`<${Page} name="sessions" title="Sessions"><p>This page needs the "read" scope.</p><//>`;
  const names = new Map((people.data ?? []).map((p) => [p.id, p.name]));
  const channelTypes = [...new Set((channels.data ?? []).map((c) => c.type))];
  return html`<${Page} name="sessions" title="Sessions">
    <div class="filters">
      <label class="field">
        <span>Person</span>
        <select
          value=${principalId}
          data-testid="sessions-person"
          onChange=${(e: Event) => {
            setOffset(0);
            setPrincipalId((e.target as HTMLSelectElement).value);
          }}
        >
          <option value="">everyone</option>
          ${(people.data ?? []).map((p) => html`<option key=${p.id} value=${p.id}>${p.name} (${p.role})</option>`)}
        </select>
      </label>
      <label class="field">
        <span>Channel</span>
        <select
          value=${channel}
          data-testid="sessions-channel"
          onChange=${(e: Event) => {
            setOffset(0);
            setChannel((e.target as HTMLSelectElement).value);
          }}
        >
          <option value="">every channel</option>
          ${channelTypes.map((c) => html`<option key=${c} value=${c}>${c}</option>`)}
        </select>
      </label>
    </div>
    <${Loading} when=${list.loading && !list.data} />
    <${ErrorNote} error=${list.error} />
    ${list.data && list.data.length === 0 ? html`<${Empty} testid="sessions-empty">No sessions match.<//>` : null}
    <div class="table-wrap">
      <table data-testid="sessions-table">
        <thead><tr><th>Session</th><th>Person</th><th>Channel</th><th>Agent</th><th>Last active</th><th>State</th></tr></thead>
        <tbody>
          ${(list.data ?? []).map(
            (s) => html`<tr key=${s.id} data-testid=${`session-row-${s.id}`}>
              <td><${Link} to=${pathFor('session', s.id)} testid=${`session-link-${s.id}`}>${s.conversation ?? s.key}<//></td>
              <td>${s.principalId ? (names.get(s.principalId) ?? s.principalId) : 'guest'}</td>
              <td>${s.channel}:${s.account} <span class="muted small">${s.scope}</span></td>
              <td>${s.agentId}</td>
              <td class="nowrap">${formatRelative(s.updatedAt)}</td>
              <td><${Badge} state=${s.endedAt ? 'ended' : 'open'} /></td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <div class="pager">
      <button type="button" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE_SIZE))}>Newer</button>
      <button type="button" disabled=${(list.data?.length ?? 0) < PAGE_SIZE} onClick=${() => setOffset(offset + PAGE_SIZE)}>Older</button>
    </div>
  <//>`;
}
