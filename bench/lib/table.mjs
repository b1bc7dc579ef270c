// The bench's result table: rows of { metric, unit, gateway, baseline, ratio, target, better, ok }.

const INTEGER_UNITS = new Set(['count', 'turns', 'tokens', 'bytes']);

/** The table's lines (header, rule, one line per row): numbers ≥ 100 without decimals, others with 2 (whole counts, tokens and bytes as integers). */
export function formatTable(rows) {
  const num = (v) => (v === null || v === undefined ? '—' : typeof v === 'number' ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)) : String(v));
  // Counts print as integers.
  const fmt = (v, unit) => (typeof v === 'number' && INTEGER_UNITS.has(unit) && Number.isInteger(v) ? String(v) : num(v));
  const target = (row) => (row.target === null ? '' : `${row.better === 'lower' ? '≤' : '≥'} ${row.target}`);
  const head = ['metric', 'unit', 'gateway', 'baseline', 'gw/base', 'target', ''];
  const body = rows.map((x) => [
    x.metric,
    x.unit,
    fmt(x.gateway, x.unit),
    fmt(x.baseline, x.unit),
    x.ratio === null ? '' : `${x.ratio.toFixed(2)}x`,
    target(x),
    x.ok === null ? '' : x.ok ? 'ok' : 'MISS',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 || i === 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];
}

/**
 * A table row without a target or baseline (a figure that compares setups): `value` null when it
 * was not measured; `unit` '' and `value` null for a note such as "n/a (why)".
 */
export function figureRow(metric, unit, value, better = 'lower') {
  return { metric, unit, gateway: typeof value === 'number' ? value : null, baseline: null, ratio: null, target: null, better, ok: null };
}
