import { useState } from 'preact/hooks';
import { Badge, ErrorNote, Link, Loading, Page } from '../components/ui';
import { api } from '../context';
import { formatCount, formatDuration, formatTime } from '../format';
import { html } from '../html';
import { useAsync, useEvents } from '../hooks';
import { type ConsoleSession, hasScope } from '../session';
import type { ChannelInfo, Readyz, ReplicasView, Stats, TurnEnded } from '../types';
import { statsOf } from '../types';

async function loadReadyz(): Promise<Readyz | null> {
  const res = await fetch('/readyz', { credentials: 'same-origin', headers: { accept: 'application/json' }, cache: 'no-store' });
  const body: unknown = await res.json().catch(() => null);
  return body && typeof body === 'object' ? (body as Readyz) : null;
}

function ChannelCard(props: { channel: ChannelInfo; readyDetail?: Record<string, unknown> }) {
  const { channel } = props;
  const c = channel.counters ?? {};
  return html`<li class="card channel" data-testid=${`channel-health-${channel.type}-${channel.account}`} data-state=${channel.health.state}>
    <div class="row">
      <strong>${channel.id}</strong>
      <${Badge} state=${channel.health.state} testid=${`channel-state-${channel.type}-${channel.account}`} />
      ${channel.required ? html`<span class="muted small">required</span>` : null}
    </div>
    ${channel.health.detail ? html`<p class="detail" data-testid=${`channel-detail-${channel.type}-${channel.account}`}>${channel.health.detail}</p>` : null}
    ${
      Object.keys(c).length > 0
        ? html`<p class="counters small muted" data-testid=${`channel-counters-${channel.type}-${channel.account}`}>
            ${Object.entries(c)
              .map(([k, v]) => `${k.replace(/_/g, ' ')} ${typeof v === 'number' ? formatCount(v) : JSON.stringify(v)}`)
              .join(' · ')}
          </p>`
        : null
    }
  </li>`;
}

/** One replica: its id, since when it runs, the accounts it receives for and how many sessions it runs. */
function ReplicaCard(props: { replica: ReplicasView['replicas'][number] }) {
  const { replica } = props;
  const receivers = replica.holds.filter((h) => h.name.startsWith('receiver:')).map((h) => h.name.slice('receiver:'.length));
  const sessions = replica.holds.filter((h) => h.name.startsWith('session:')).length;
  return html`<li class="card replica" data-testid=${`replica-${replica.id}`} data-self=${replica.self ? 'true' : 'false'}>
    <div class="row">
      <strong>${replica.id}</strong>
      ${replica.self ? html`<span class="muted small">this console's replica</span>` : null}
    </div>
    <p class="detail small">
      since ${formatTime(replica.since)} ·
      <span data-testid=${`replica-receivers-${replica.id}`}>${receivers.length > 0 ? `receives for ${receivers.join(', ')}` : 'no receiver'}</span> ·
      <span data-testid=${`replica-sessions-${replica.id}`}>${formatCount(sessions)} running session${sessions === 1 ? '' : 's'}</span>
    </p>
  </li>`;
}

function Stat(props: { label: string; value: string; testid: string; to?: string }) {
  const value = html`<span class="stat-value" data-testid=${props.testid}>${props.value}</span>`;
  return html`<div class="card stat">
    <span class="stat-label">${props.label}</span>
    ${props.to ? html`<${Link} to=${props.to}>${value}<//>` : value}
  </div>`;
}

/** Overview: channel health (with /readyz details), turns per minute, model latency and errors, pending approvals and pairing — live. */
export function OverviewPage(props: { session: ConsoleSession }) {
  const canRead = hasScope(props.session, 'read');
  const channels = useAsync(async () => (canRead ? (await api.get<{ channels: ChannelInfo[] }>('/channels')).channels : []), [canRead]);
  const ready = useAsync(loadReadyz, []);
  const replicas = useAsync(async () => (canRead ? api.get<ReplicasView>('/replicas') : null), [canRead]);
  const today = useAsync(async () => (canRead ? api.get<{ activeTurns: number; turns: Record<string, number> }>('/stats/turns') : null), [canRead]);
  const initial = useAsync(async () => {
    const out: { approvals: number | null; pairing: number | null } = { approvals: null, pairing: null };
    const [a, p] = await Promise.allSettled([
      hasScope(props.session, 'approvals') ? api.get<{ approvals: unknown[] }>('/approvals', { status: 'pending', limit: 500 }) : Promise.reject(null),
      hasScope(props.session, 'pairing') ? api.get<{ requests: unknown[] }>('/pairing', { status: 'pending' }) : Promise.reject(null),
    ]);
    if (a.status === 'fulfilled') out.approvals = a.value.approvals.length;
    if (p.status === 'fulfilled') out.pairing = p.value.requests.length;
    return out;
  }, []);
  const [health, setHealth] = useState<Record<string, { state: ChannelInfo['health']['state']; detail?: string }>>({});
  const [stats, setStats] = useState<Stats | null>(null);
  const [turns, setTurns] = useState<TurnEnded[]>([]);
  const [pendingDelta, setPendingDelta] = useState({ approvals: 0, pairing: 0 });

  useEvents(['channel.health', 'stats', 'turn.ended', 'approval.requested', 'approval.decided', 'pairing.requested', 'pairing.decided'], (type, data) => {
    if (type === 'channel.health' && typeof data.channel === 'string' && typeof data.state === 'string') {
      const id = typeof data.account === 'string' && !data.channel.includes(':') ? `${data.channel}:${data.account}` : data.channel;
      setHealth((h) => ({
        ...h,
        [id]: { state: data.state as ChannelInfo['health']['state'], ...(typeof data.detail === 'string' ? { detail: data.detail } : {}) },
      }));
    } else if (type === 'stats') {
      // Each stats tick also re-reads the channels (their counters; and health after a missed event).
      setHealth({});
      channels.reload();
      replicas.reload();
      today.reload();
      const s = statsOf(data);
      if (s) {
        setStats(s);
        setPendingDelta({ approvals: 0, pairing: 0 });
      }
    } else if (type === 'turn.ended') {
      setTurns((t) => [{ ...data, at: new Date().toISOString() } as TurnEnded, ...t].slice(0, 10));
    } else if (type === 'approval.requested') setPendingDelta((d) => ({ ...d, approvals: d.approvals + 1 }));
    else if (type === 'approval.decided') setPendingDelta((d) => ({ ...d, approvals: d.approvals - 1 }));
    else if (type === 'pairing.requested') setPendingDelta((d) => ({ ...d, pairing: d.pairing + 1 }));
    else if (type === 'pairing.decided') setPendingDelta((d) => ({ ...d, pairing: d.pairing - 1 }));
  });

  const list = (channels.data ?? []).map((c) => {
    const live = health[c.id];
    return live ? { ...c, health: live } : c;
  });
  const pendingApprovals = stats?.pendingApprovals ?? (initial.data?.approvals == null ? null : Math.max(0, initial.data.approvals + pendingDelta.approvals));
  const pendingPairing = stats?.pendingPairing ?? (initial.data?.pairing == null ? null : Math.max(0, initial.data.pairing + pendingDelta.pairing));
  const r = ready.data;

  return html`<${Page} name="overview" title="Overview">
    <div class="stats" aria-live="polite">
      <${Stat} label="Turns per minute" value=${stats ? formatCount(stats.turnsPerMinute) : '—'} testid="stat-turns-per-minute" />
      <${Stat} label="Model latency p50" value=${stats ? formatDuration(stats.latencyP50Ms) : '—'} testid="stat-latency-p50" />
      <${Stat} label="Model latency p95" value=${stats ? formatDuration(stats.latencyP95Ms) : '—'} testid="stat-latency-p95" />
      <${Stat} label="Model errors" value=${stats ? formatCount(stats.modelErrors) : '—'} testid="stat-model-errors" />
      <${Stat} label="Pending approvals" value=${formatCount(pendingApprovals)} testid="stat-pending-approvals" to="/approvals" />
      <${Stat} label="Pending pairing" value=${formatCount(pendingPairing)} testid="stat-pending-pairing" to="/pairing" />
    </div>
    ${stats ? null : html`<p class="muted small">Turn and model figures arrive with the live stream's next update.</p>`}

    <h2>Channels</h2>
    ${
      r
        ? html`<p class="ready" data-testid="readyz" data-state=${r.state}>
            Gateway <${Badge} state=${r.state} />
            ${r.database ? html` · database (${r.database.engine}) ${r.database.state}${r.database.error ? `: ${r.database.error}` : ''}` : null}
            ${r.deadLetters ? html` · dead letters ${formatCount(r.deadLetters.count)}${r.deadLetters.latest ? ` (latest ${formatTime(r.deadLetters.latest.failedAt)}: ${r.deadLetters.latest.error})` : ''}` : null}
            ${r.tools?.exec ? html` · exec ${r.tools.exec.available ? `available (${r.tools.exec.sandbox})` : `unavailable: ${r.tools.exec.reason ?? r.tools.exec.sandbox}`}` : null}
          </p>`
        : null
    }
    <${Loading} when=${channels.loading && !channels.data} />
    <${ErrorNote} error=${channels.error} />
    ${canRead ? null : html`<p class="muted">Channel health needs the "read" scope.</p>`}
    <ul class="channels" data-testid="channels">
      ${list.map((c) => html`<${ChannelCard} key=${c.id} channel=${c} readyDetail=${r?.channels?.[c.id]} />`)}
    </ul>

    ${
      replicas.data && replicas.data.engine === 'postgres'
        ? html`<h2>Replicas</h2>
            <ul class="channels" data-testid="replicas">
              ${replicas.data.replicas.map((x) => html`<${ReplicaCard} key=${x.id} replica=${x} />`)}
            </ul>`
        : null
    }

    <h2>Turns</h2>
    ${
      today.data
        ? html`<p data-testid="turns-today">
            ${`Today (UTC): ${formatCount(Object.values(today.data.turns).reduce((a, b) => a + b, 0))} turns${Object.keys(today.data.turns).length > 0 ? ' — ' : ''}${Object.entries(
              today.data.turns,
            )
              .map(([state, n]) => `${state.replace(/_/g, ' ')} ${formatCount(n)}`)
              .join(' · ')}; ${formatCount(today.data.activeTurns)} running now`}
          </p>`
        : null
    }
    ${
      turns.length === 0
        ? html`<p class="muted small" data-testid="recent-turns-empty">No turn has ended since this page opened.</p>`
        : html`<ul class="plain" data-testid="recent-turns">
            ${turns.map(
              (t, i) =>
                html`<li key=${i}>${formatTime(t.at)} · ${String(t.channel ?? '')} · <${Badge} state=${String(t.outcome ?? 'unknown')} /> · ${formatDuration(t.durationMs)}</li>`,
            )}
          </ul>`
    }
  <//>`;
}
