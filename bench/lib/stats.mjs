// Small statistics helpers for the bench (no dependencies).

/** Nearest-rank percentile of an ascending-sorted array (p in 0..100). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(values) {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** { n, p50, p90, p99, mean, min, max } of a list of numbers (milliseconds). */
export function summarize(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  const mean = n === 0 ? NaN : s.reduce((a, b) => a + b, 0) / n;
  return {
    n,
    p50: percentile(s, 50),
    p90: percentile(s, 90),
    p99: percentile(s, 99),
    mean,
    min: n ? s[0] : NaN,
    max: n ? s[n - 1] : NaN,
  };
}

/** Rounds to `d` decimals (NaN / null stay as they are). */
export function round(x, d = 2) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return x ?? null;
  const f = 10 ** d;
  return Math.round(x * f) / f;
}
