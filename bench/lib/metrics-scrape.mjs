// The cost of one Prometheus scrape (GET /metrics, docs/metrics.md): of the measured gateway after
// its loads (sequential scrapes with the operator token, timed from the client, round trip on
// loopback), and rendered in-process at a larger deployment's series counts.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

/**
 * The render cost at a larger deployment's series counts, in the bench process against the
 * compiled gateway (apps/gateway/dist): `GatewayMetrics` over an in-memory store, with 6 channel
 * accounts × every turn outcome, 3 models, 40 tools × every tool outcome and denial kind, and every
 * approval outcome counted once; then `runs` scrapes, median.
 */
export async function measureScrapeAtScale(root, runs) {
  const { GatewayMetrics } = await import(pathToFileURL(join(root, 'apps/gateway/dist/metrics/gateway-metrics.js')).href);
  const { openSqliteStorage } = await import(pathToFileURL(join(root, 'packages/store/dist/index.js')).href);
  const storage = openSqliteStorage({ file: ':memory:' });
  try {
    const accounts = ['websocket:default', 'telegram:main', 'telegram:support', 'slack:team', 'webhook:ci', 'openai:default'].map((id) => {
      const [type, account] = id.split(':');
      return { id, type, account, health: () => ({ state: 'up' }) };
    });
    const m = new GatewayMetrics({ storage, channels: accounts, activeTurns: () => 0 });
    const outcomes = ['completed', 'max_turns', 'aborted', 'model_error', 'prompt_too_long', 'denial_limit', 'hook_stopped', 'budget_exceeded', 'internal'];
    for (const c of accounts)
      for (const outcome of outcomes)
        m.turnEnded({ channel: c.type, account: c.account, agentId: 'default', state: 'completed', reason: outcome, durationMs: 1234 });
    const tokens = { inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 1000, cacheCreationInputTokens: 50 };
    for (const model of ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-5']) {
      m.modelCall(model, 2.5, { tokens, costUsd: 0.01 });
      m.modelCall(model, 30, null);
    }
    for (let t = 0; t < 40; t++) {
      m.toolCall(`tool_${t}`, 'ok');
      m.toolCall(`tool_${t}`, 'error');
      for (const kind of ['rule', 'mode', 'safety', 'hook', 'person', 'limit']) m.toolCall(`tool_${t}`, 'denied', kind);
    }
    for (const status of ['allowed', 'denied', 'expired', 'cancelled']) m.approvalDecided(status);
    let text = await m.scrape();
    const times = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      text = await m.scrape();
      times.push(performance.now() - t0);
    }
    const series = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
    return { medianMs: round(median(times), 3), runs, series, bytes: Buffer.byteLength(text) };
  } finally {
    storage.close();
  }
}
