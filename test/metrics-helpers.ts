import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One sample of a parsed metric family (prom2json's shape). */
export interface PromSample {
  labels?: Record<string, string>;
  value?: string;
}

/** One metric family as `parse-prometheus-text-format` returns it (prom2json's shape). */
export interface PromFamily {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: PromSample[];
}

/** A scrape as an independent Prometheus text-format parser reads it. */
export interface ParsedMetrics {
  /** Every family by name, with its declared type. */
  families: Map<string, PromFamily>;
  /** Every series by sample name (`x_count`, `x_bucket` for a histogram `x`). */
  samples: Map<string, PromSample[]>;
}

const parse = parsePrometheusTextFormat as unknown as (text: string) => PromFamily[];

/**
 * Parses exposition text twice with `parse-prometheus-text-format`: as it is, for the families and
 * their types (a malformed line throws), and with histograms declared untyped, for their series —
 * the parser folds a histogram's labelled series into one and drops their labels.
 */
export function parseMetrics(text: string): ParsedMetrics {
  const families = new Map(parse(text).map((f) => [f.name, f]));
  const samples = new Map<string, PromSample[]>();
  for (const f of parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'))) {
    samples.set(f.name, [...(samples.get(f.name) ?? []), ...f.metrics]);
  }
  return { families, samples };
}

/** Whether a sample carries every label of `want`. */
const matches = (s: PromSample, want: Record<string, string>) => Object.entries(want).every(([k, v]) => s.labels?.[k] === v);

/**
 * The value of `name` summed over the series matching `labels` (for a histogram, its `_count`);
 * 0 when the family or the series is absent (a counter not yet moved).
 */
export function sampleValue(m: ParsedMetrics, name: string, labels: Record<string, string> = {}): number {
  const series = m.families.get(name)?.type === 'HISTOGRAM' ? `${name}_count` : name;
  return (m.samples.get(series) ?? []).filter((s) => matches(s, labels)).reduce((n, s) => n + Number(s.value), 0);
}
