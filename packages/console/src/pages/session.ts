import { useState } from 'preact/hooks';
import { seg } from '../api';
import { Badge, ConfirmButton, ErrorNote, Link, Loading, Page } from '../components/ui';
import { api, navigate } from '../context';
import { formatCount, formatTime } from '../format';
import { html } from '../html';
import { useAction, useAsync } from '../hooks';
import { pathFor } from '../router';
import { type ConsoleSession, hasScope } from '../session';
import { type EntryView, type Part, type SidechainLink, sidechainMessages, viewEntry } from '../transcript';
import type { Approval, Principal, SessionInfo, TranscriptEntry } from '../types';

function PartView(props: { part: Part }) {
  const p = props.part;
  switch (p.type) {
    case 'text':
      return html`<p class="text">${p.text}</p>`;
    case 'tool_use':
      return html`<div class="tool-call" data-testid="transcript-tool-call">
        <span class="mono strong">${p.name}</span> <span class="muted small mono">${p.id}</span>
        <pre>${p.input}</pre>
      </div>`;
    case 'tool_result':
      return html`<div class=${p.isError ? 'tool-result is-error' : 'tool-result'} data-testid="transcript-tool-result">
        ${p.isError ? html`<${Badge} state="error" />` : null}
        <pre>${p.text}</pre>
        ${p.cut ? html`<p class="muted small" data-testid="transcript-result-cut">Result cut${p.fullLength !== null ? ` (whole result ${formatCount(p.fullLength)} characters)` : ''}.</p>` : null}
      </div>`;
    default:
      return html`<pre class="muted">${p.text}</pre>`;
  }
}

function Sidechain(props: { sessionId: string; link: SidechainLink }) {
  const [open, setOpen] = useState(false);
  const data = useAsync(
    async () => (open ? api.get<{ messages: unknown }>(`/sessions/${seg(props.sessionId)}/sidechains/${seg(props.link.toolUseId)}`) : null),
    [open, props.sessionId, props.link.toolUseId],
  );
  return html`<div class="sidechain" data-testid="transcript-sidechain">
    <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)}>
      ${open ? 'Hide' : 'Show'} subagent ${props.link.type}: ${props.link.description} (${props.link.state})
    </button>
    ${
      open
        ? html`<div class="sidechain-body">
            <${Loading} when=${data.loading} />
            <${ErrorNote} error=${data.error} />
            ${sidechainMessages(data.data?.messages).map(
              (m, i) =>
                html`<div key=${i} class="entry"><span class="entry-label">${m.role}</span>${m.parts.map((p, j) => html`<${PartView} key=${j} part=${p} />`)}</div>`,
            )}
          </div>`
        : null
    }
  </div>`;
}

function EntryItem(props: { view: EntryView; approvals: Approval[]; sessionId: string }) {
  const v = props.view;
  return html`<li class=${`entry entry-${v.kind}${v.boundary ? ' boundary' : ''}`} data-testid="transcript-entry" data-kind=${v.kind} data-seq=${v.seq}>
    <div class="entry-head">
      <span class="entry-label">${v.label}</span>
      ${v.model ? html`<span class="muted small mono">${v.model}</span>` : null}
      <span class="muted small">#${v.seq} · ${formatTime(v.createdAt)}</span>
    </div>
    ${v.parts.map((p, i) => html`<${PartView} key=${i} part=${p} />`)}
    ${props.approvals.map(
      (a) => html`<p class="approval-note" data-testid="transcript-approval">
        Approval <${Badge} state=${a.status} /> (asked by the ${a.source} step)${a.decidedBy ? ` · decided by ${a.decidedBy}` : ''}${a.always ? ' · always allow' : ''}${
          a.choice ? ` · mode ${a.choice}` : ''
        }
      </p>`,
    )}
    ${v.sidechains.map((s) => html`<${Sidechain} key=${s.toolUseId} sessionId=${props.sessionId} link=${s} />`)}
  </li>`;
}

/** One session: its transcript (tool calls, cut results, approvals, compaction boundaries, subagent sidechains); reset and delete. */
export function SessionPage(props: { session: ConsoleSession; id: string }) {
  const canApprovals = hasScope(props.session, 'approvals');
  const canWrite = hasScope(props.session, 'write');
  const data = useAsync(() => api.get<{ session: SessionInfo; entries: TranscriptEntry[] }>(`/sessions/${seg(props.id)}/transcript`), [props.id]);
  const approvals = useAsync(
    async () => (canApprovals ? (await api.get<{ approvals: Approval[] }>('/approvals', { sessionId: props.id, limit: 500 })).approvals : []),
    [props.id, canApprovals],
  );
  const action = useAction();
  const s = data.data?.session;
  const ownerId = s?.principalId ?? null;
  const owner = useAsync(async () => (ownerId ? (await api.get<{ principal: Principal }>(`/principals/${seg(ownerId)}`)).principal : null), [ownerId]);
  const byToolUse = new Map<string, Approval[]>();
  for (const a of approvals.data ?? []) byToolUse.set(a.toolUseId, [...(byToolUse.get(a.toolUseId) ?? []), a]);
  const views = (data.data?.entries ?? []).map(viewEntry);
  const shown = new Set<string>();
  const approvalsFor = (v: EntryView): Approval[] => {
    if (v.kind !== 'tool_start' && v.kind !== 'assistant') return [];
    const out: Approval[] = [];
    for (const id of v.toolUseIds) {
      if (shown.has(id)) continue;
      const list = byToolUse.get(id);
      if (list) {
        shown.add(id);
        out.push(...list);
      }
    }
    return out;
  };

  const actions = s
    ? html`${
        canWrite && !s.endedAt
          ? html`<${ConfirmButton}
              label="Reset"
              testid="session-reset"
              disabled=${action.busy}
              onConfirm=${() => action.run(() => api.post(`/sessions/${seg(props.id)}/reset`)).then((ok) => ok && data.reload())}
            />`
          : null
      }
      ${
        canWrite
          ? html`<${ConfirmButton}
              label="Delete"
              danger=${true}
              testid="session-delete"
              disabled=${action.busy}
              onConfirm=${() => action.run(() => api.del(`/sessions/${seg(props.id)}`)).then((ok) => ok && navigate('/sessions'))}
            />`
          : null
      }`
    : null;

  return html`<${Page} name="session" title="Session" actions=${actions}>
    <p><${Link} to="/sessions">← All sessions<//></p>
    <${Loading} when=${data.loading && !data.data} />
    <${ErrorNote} error=${data.error} />
    <${ErrorNote} error=${action.error} testid="session-action-error" />
    ${
      s
        ? html`<dl class="facts" data-testid="session-facts">
            <div><dt>Id</dt><dd class="mono">${s.id}</dd></div>
            <div><dt>Channel</dt><dd>${s.channel}:${s.account} (${s.scope})</dd></div>
            <div><dt>Conversation</dt><dd class="mono">${s.conversation ?? '—'}</dd></div>
            <div><dt>Person</dt><dd>${s.principalId ? html`<${Link} to=${pathFor('person', s.principalId)}>${owner.data?.name ?? s.principalId}<//>` : 'guest'}</dd></div>
            <div><dt>Agent</dt><dd>${s.agentId}</dd></div>
            <div><dt>State</dt><dd><${Badge} state=${s.endedAt ? 'ended' : 'open'} testid="session-state" /> ${s.endedAt ? formatTime(s.endedAt) : ''}</dd></div>
          </dl>`
        : null
    }
    ${data.data && views.length === 0 ? html`<p class="muted">The transcript is empty${s?.endedAt ? '' : ' so far'}.</p>` : null}
    <ol class="transcript" data-testid="transcript">
      ${views.map((v) => html`<${EntryItem} key=${v.seq} view=${v} approvals=${approvalsFor(v)} sessionId=${props.id} />`)}
    </ol>
  <//>`;
}
