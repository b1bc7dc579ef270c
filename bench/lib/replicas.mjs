// The replicas load of `npm run bench` (issue 20, acceptance 6): the 32-session closed-loop text
// load (bench/lib/load.mjs) through real WebSocket connections against 1 gateway on SQLite and
// 1, 2 and 3 replicas on one PostgreSQL (packages/testkit startReplicas: real gateway processes
// behind its loopback round-robin proxy, so the 32 connections spread over the replicas). On one
// machine the replicas share its cores with PostgreSQL and the bench: the figures say what the
// coordination costs, not how a fleet of machines scales. Skipped (with the reason) without PostgreSQL.
import { figureRow } from './table.mjs';
import { checkEcho, GATEWAY_CONFIG, BENCH_RATE_LIMIT } from './common.mjs';
import { ChatConnection, runLoad } from './load.mjs';
import { round } from './stats.mjs';

const SESSIONS = 32;

/** The control API's POST (operator token) on `url`; resolves the JSON body, rejects on another status than 201. */
async function post(url, token, path, body) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST ${path}: HTTP ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** 32 members with a client token each (the database is shared: any replica mints them), connected through `wsUrl`. */
async function pool(url, wsUrl, operatorToken, label) {
  const conns = [];
  for (let i = 0; i < SESSIONS; i++) {
    const principal = await post(url, operatorToken, '/principals', { name: `bench-r${i}`, role: 'member' });
    const client = await post(url, operatorToken, '/tokens', { kind: 'client', principalId: principal.principal.id, name: `bench-r${i}` });
    conns.push(await ChatConnection.open(wsUrl, { token: client.secret, label: `${label}#${i}` }));
  }
  return conns;
}

const config = (extra = {}) => ({
  ...GATEWAY_CONFIG,
  channels: { websocket: { accounts: { default: { rateLimit: BENCH_RATE_LIMIT } } } },
  ...extra,
});

/** One setup's load: warm-up, then `turns` text turns at 32 sessions; turns/s and latency. */
async function measure(name, url, wsUrl, operatorToken, { turns, deadline, log }) {
  const conns = await pool(url, wsUrl, operatorToken, name);
  try {
    const r = await runLoad({ name, pool: conns, concurrency: SESSIONS, turns, warmupPerWorker: 2, check: checkEcho, deadline });
    const out = {
      turns: r.turnsCompleted,
      failed: r.failed,
      wrongAnswers: r.wrongAnswers,
      truncated: r.truncated,
      aborted: r.aborted,
      turnsPerSec: round(r.turnsPerSec, 0),
      p50Ms: round(r.latencyMs.p50, 2),
      p99Ms: round(r.latencyMs.p99, 2),
      otherCpuCores: r.otherCpuCores === null ? null : round(r.otherCpuCores, 2),
      errorSamples: r.errorSamples,
    };
    log(
      `replicas: ${name}: ${out.turnsPerSec} turns/s, p50 ${out.p50Ms} ms, p99 ${out.p99Ms} ms${r.failed ? `, ${r.failed} failed (${r.errorSamples.join('; ')})` : ''}`,
    );
    return out;
  } finally {
    for (const c of conns) c.ws.terminate();
  }
}

/**
 * Measures SQLite ×1 and PostgreSQL ×1, ×2, ×3 (`tk`: the compiled testkit; `modelUrl`: the fake
 * Anthropic API). PostgreSQL figures are absent (with `postgresError`) when no server can start here.
 */
export async function runReplicasBench(tk, { modelUrl, turns = 1600, counts = [1, 2, 3], deadline = Infinity, log = () => {} }) {
  const out = { sessions: SESSIONS, turns, sqlite: null, postgres: {} };
  const gw = await tk.startGateway({ modelUrl, config: config() });
  try {
    out.sqlite = await measure('sqlite ×1', gw.url, gw.wsUrl, gw.credentials().operatorToken, { turns, deadline, log });
  } finally {
    await gw.stop();
  }
  let server;
  try {
    server = await tk.startPostgres();
  } catch (err) {
    out.postgresError = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return out;
  }
  try {
    for (const count of counts) {
      // The bench logs at warn: the harness cannot wait for the info line of a replica joining.
      const replicas = await tk.startReplicas({ count, pg: await server.createDatabase(), modelUrl, config: config(), awaitJoined: false });
      try {
        out.postgres[count] = await measure(`postgres ×${count}`, replicas.url, replicas.wsUrl, replicas.credentials().operatorToken, { turns, deadline, log });
      } finally {
        await Promise.all(Array.from({ length: count }, (_, i) => replicas.stop(i).catch(() => undefined)));
        await replicas.close();
      }
    }
  } finally {
    await server.destroy();
  }
  return out;
}

/** Table rows: turns/s and p50/p99 per setup (no targets: the figures compare setups). */
export function replicasRows(r) {
  const rows = [];
  const setups = [['sqlite, 1 gateway', r.sqlite], ...Object.entries(r.postgres).map(([n, m]) => [`postgres, ${n} replica(s)`, m])];
  for (const [label, m] of setups) {
    if (!m) continue;
    rows.push(figureRow(`replicas: ${label}, ${r.sessions} sessions`, 'turns/s', m.turnsPerSec, 'higher'));
    rows.push(figureRow(`replicas: ${label}, p50 per turn`, 'ms', m.p50Ms));
    rows.push(figureRow(`replicas: ${label}, p99 per turn`, 'ms', m.p99Ms));
  }
  if (r.postgresError) rows.push(figureRow(`replicas: postgres n/a (${r.postgresError})`, '', null));
  return rows;
}
