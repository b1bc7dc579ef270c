// The cost of one Prometheus scrape (GET /metrics, docs/metrics.md) of the measured gateway after
// its loads: sequential scrapes with the operator token, timed from the client (round trip on
// loopback), with the series count and body size of the last one.
import { median, round } from './stats.mjs';

/**
 * Scrapes `gw` `runs` times, one after another; null when the gateway has no /metrics (404).
 * Every scrape must answer 200: anything else is an error (the bench reports it).
 */
export async function measureMetricsScrape(gw, runs) {
  const headers = { authorization: `Bearer ${gw.credentials().operatorToken}` };
  const times = [];
  let text = '';
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const res = await fetch(`${gw.url}/metrics`, { headers });
    text = await res.text();
    const ms = performance.now() - t0;
    if (res.status === 404 && i === 0) return null;
    if (res.status !== 200) throw new Error(`GET /metrics: HTTP ${res.status} ${text.slice(0, 200)}`);
    times.push(ms);
  }
  const series = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
  return { medianMs: round(median(times), 2), maxMs: round(Math.max(...times), 2), runs, series, bytes: Buffer.byteLength(text) };
}
