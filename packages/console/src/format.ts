/** Formatting of numbers, money, durations and times for display (plain text; the UI renders it as text). */

/** `1234` → `1,234`; `1234567` → `1.2M` when `compact`. */
export function formatCount(n: number | null | undefined, compact = false): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (compact) {
    const abs = Math.abs(n);
    if (abs >= 1e9) return `${trimZero((n / 1e9).toFixed(1))}B`;
    if (abs >= 1e6) return `${trimZero((n / 1e6).toFixed(1))}M`;
    if (abs >= 1e4) return `${trimZero((n / 1e3).toFixed(1))}k`;
  }
  return Math.round(n).toLocaleString('en-US');
}

function trimZero(s: string): string {
  return s.endsWith('.0') ? s.slice(0, -2) : s;
}

/** US dollars: `$0.0042` below a cent, `$12.34` above. */
export function formatUsd(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (n === 0) return '$0';
  const abs = Math.abs(n);
  const digits = abs < 0.01 ? 4 : 2;
  return `${n < 0 ? '-' : ''}$${abs.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

/** Milliseconds: `850 ms`, `1.2 s`, `3 min 5 s`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${trimZero((ms / 1000).toFixed(1))} s`;
  const min = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  if (min < 60) return s === 0 ? `${min} min` : `${min} min ${s} s`;
  const h = Math.floor(min / 60);
  return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
}

/** An ISO time as `2026-12-05 23:41:48 UTC` (UTC, so every operator reads the same clock), or `—`. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** How long ago (or until) an ISO time is, relative to `now`: `5 s ago`, `in 2 min`. */
export function formatRelative(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '—';
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return '—';
  const diff = t - now;
  const text = formatDuration(Math.abs(diff) < 1000 ? 0 : Math.abs(diff)).replace(/^0 ms$/, 'now');
  if (text === 'now') return text;
  return diff < 0 ? `${text} ago` : `in ${text}`;
}

/** Text cut to `max` characters with an ellipsis and the number of characters left out. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** A UTC day `YYYY-MM-DD` `days` days before `now`. */
export function utcDay(now: Date, daysBack = 0): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - daysBack));
  return d.toISOString().slice(0, 10);
}

/** Seconds since the epoch of a UTC day (`2026-12-05` → its midnight), for chart x values. */
export function daySeconds(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) / 1000;
}

/** A budget as one line: `day 100k tokens / $1.00 · month $20.00`, or `—`. */
export function budgetText(b: { day?: { tokens?: number; usd?: number }; month?: { tokens?: number; usd?: number } } | undefined): string {
  if (!b) return '—';
  const part = (label: string, l?: { tokens?: number; usd?: number }) => {
    if (!l) return null;
    const bits = [l.tokens !== undefined ? `${formatCount(l.tokens, true)} tokens` : null, l.usd !== undefined ? formatUsd(l.usd) : null].filter(Boolean);
    return bits.length > 0 ? `${label} ${bits.join(' / ')}` : null;
  };
  const out = [part('day', b.day), part('month', b.month)].filter(Boolean);
  return out.length > 0 ? out.join(' · ') : '—';
}

/** A conversation reference (`{ channel, account, id, kind, thread? }`, or a string id) as one line. */
export function conversationText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (typeof c !== 'object' || c === null) return '';
  const r = c as Record<string, unknown>;
  const s = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  const where = [s(r.channel), s(r.account), s(r.id)].filter(Boolean).join(':');
  return `${where}${s(r.kind) ? ` (${s(r.kind)})` : ''}${s(r.thread) ? ` thread ${s(r.thread)}` : ''}`;
}

/** US dollars for a chart axis: enough decimals to tell small ticks apart. */
export function formatUsdAxis(n: number): string {
  if (!Number.isFinite(n)) return '';
  const abs = Math.abs(n);
  return `$${n.toFixed(abs === 0 ? 0 : abs < 0.1 ? 4 : abs < 10 ? 2 : 0)}`;
}
