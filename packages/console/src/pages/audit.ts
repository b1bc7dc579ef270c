import { useState } from 'preact/hooks';
import { ErrorNote, Loading, Page } from '../components/ui';
import { api } from '../context';
import { formatTime } from '../format';
import { html } from '../html';
import { useAsync } from '../hooks';
import type { ConsoleSession } from '../session';
import { hasScope } from '../session';
import type { AuditEntry } from '../types';
import { sinceParam } from '../policy-view';

const PAGE_SIZE = 50;

/** The audit log: filter by action, actor and time; page through with newer/older. */
export function AuditPage(props: { session: ConsoleSession }) {
  const allowed = hasScope(props.session, 'read');
  const [filters, setFilters] = useState({ action: '', actor: '', since: '' });
  const [draft, setDraft] = useState(filters);
  const [offset, setOffset] = useState(0);
  const page = useAsync(
    async () =>
      allowed
        ? api.get<{ entries: AuditEntry[]; nextOffset: number | null }>('/audit', {
            action: filters.action.trim() || undefined,
            actor: filters.actor.trim() || undefined,
            since: sinceParam(filters.since),
            limit: PAGE_SIZE,
            offset,
          })
        : { entries: [], nextOffset: null },
    [allowed, filters, offset],
  );
  if (!allowed) return html`<${Page} name="audit" title="Audit log"><p>This page needs the "read" scope.</p><//>`;
  const set = (key: keyof typeof draft) => (e: Event) => setDraft({ ...draft, [key]: (e.target as HTMLInputElement).value });
  return html`<${Page} name="audit" title="Audit log">
    <form
      class="filters"
      data-testid="audit-filters"
      onSubmit=${(e: Event) => {
        e.preventDefault();
        setOffset(0);
        setFilters(draft);
      }}
    >
      <label class="field"><span>Action</span><input type="text" value=${draft.action} onInput=${set('action')} placeholder="e.g. token.create" data-testid="audit-action" /></label>
      <label class="field"><span>Actor</span><input type="text" value=${draft.actor} onInput=${set('actor')} placeholder="e.g. operator:ops" data-testid="audit-actor" /></label>
      <label class="field"><span>Since (UTC)</span><input type="datetime-local" value=${draft.since} onInput=${set('since')} data-testid="audit-since" /></label>
      <button type="submit" data-testid="audit-apply">Filter</button>
    </form>
    <${Loading} when=${page.loading && !page.data} />
    <${ErrorNote} error=${page.error} />
    <div class="table-wrap">
      <table data-testid="audit-table">
        <thead><tr><th>When</th><th>Actor</th><th>Action</th><th>Target</th><th>Detail</th></tr></thead>
        <tbody>
          ${(page.data?.entries ?? []).map(
            (e, i) => html`<tr key=${e.id ?? i} data-testid="audit-entry">
              <td class="nowrap">${formatTime(e.at)}</td>
              <td>${e.actor}</td>
              <td class="mono">${e.action}</td>
              <td class="mono">${e.target ?? ''}</td>
              <td><code class="detail">${JSON.stringify(e.detail)}</code></td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    <div class="pager">
      <button type="button" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE_SIZE))} data-testid="audit-newer">Newer</button>
      <span class="muted small">entries ${offset + 1}–${offset + (page.data?.entries.length ?? 0)}</span>
      <button type="button" disabled=${page.data?.nextOffset == null} onClick=${() => setOffset(page.data?.nextOffset ?? offset)} data-testid="audit-older">Older</button>
    </div>
  <//>`;
}
