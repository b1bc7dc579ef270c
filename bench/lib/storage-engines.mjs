// The storage figures of `npm run bench` (issue 19): the store writes of one text turn (accept;
// begin with the user entry; finish with the assistant entry and the final's ledger row) on
// SQLite (WAL file) and on a real PostgreSQL server (packages/testkit startPostgres: Debian's
// binaries), at 1 and 32 sessions writing at once. In-process against the compiled
// `@switchboard/store`; turns/s and per-turn latency. Skipped (with the reason) without PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { percentile, round } from './stats.mjs';
import { figureRow } from './table.mjs';

const usage = { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, models: {}, retries: 0, fallbackUsed: false };
const message = (run, i, sessions) => ({
  dedupeKey: `${run}-m${i}`,
  channel: 'websocket',
  account: 'default',
  conversation: { channel: 'websocket', account: 'default', id: `p${i % sessions}`, kind: 'dm' },
  sender: { identity: `ws:p${i % sessions}`, isBot: false },
  kind: 'dm',
  mentioned: false,
  text: `ping ${i}`,
  platformId: `${run}-m${i}`,
  receivedAt: new Date(),
  principalId: `p${i % sessions}`,
});
const key = (i, sessions) => ({ agent: 'main', channel: 'websocket', account: 'default', scope: 'dm', principalId: `p${i % sessions}` });

/** One turn's writes, as the engine makes them; returns its latency in ms. */
async function turn(s, run, i, sessions) {
  const t0 = performance.now();
  const a = await s.turns.accept(message(run, i, sessions), { key: key(i, sessions), clientId: null });
  await s.turns.begin(a.turnId, [{ kind: 'user', turnId: a.turnId, payload: { content: [{ type: 'text', text: `ping ${i}` }] } }]);
  await s.turns.finish(a.turnId, {
    state: 'completed',
    reason: 'completed',
    usage,
    entries: [{ kind: 'assistant', turnId: a.turnId, payload: { content: [{ type: 'text', text: `echo: ping ${i}` }], model: 'm' } }],
    delivery: {
      turnId: a.turnId,
      part: 0,
      kind: 'final',
      channel: 'websocket',
      account: 'default',
      conversationId: `p${i % sessions}`,
      platformMessageId: null,
      content: { text: `echo: ping ${i}`, state: 'completed', reason: 'completed', clientId: null },
    },
  });
  return performance.now() - t0;
}

/** `turns` turns, `concurrency` sessions writing at once (each session's turns one after another, as lanes run them). */
async function load(s, run, turns, concurrency) {
  const lat = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = next++; i < turns; i = next++) lat.push(await turn(s, run, i * concurrency + w, concurrency));
    }),
  );
  const ms = performance.now() - t0;
  lat.sort((a, b) => a - b);
  return { turns: lat.length, turnsPerSec: round((lat.length / ms) * 1000, 0), p50Ms: round(percentile(lat, 50), 2), p99Ms: round(percentile(lat, 99), 2) };
}

/** Measures both engines; PostgreSQL figures are absent (with `postgresError`) when no server can start here. */
export async function runStorageBench(root, { turns = 2000, levels = [1, 32], log = () => {} } = {}) {
  const store = await import(pathToFileURL(join(root, 'packages/store/dist/index.js')).href);
  const testkit = await import(pathToFileURL(join(root, 'packages/testkit/dist/postgres.js')).href);
  const dir = mkdtempSync(join(tmpdir(), 'swb-bench-storage-'));
  const out = { turns, levels, sqlite: {}, postgres: {} };
  try {
    const lite = store.openSqliteStorage({ file: join(dir, 'switchboard.db') });
    try {
      await load(lite, 'warm', 200, 8);
      for (const c of levels) out.sqlite[c] = await load(lite, `c${c}`, turns, c);
    } finally {
      lite.close();
    }
    log(`storage: sqlite ${levels.map((c) => `${c}×: ${out.sqlite[c].turnsPerSec} turns/s`).join(', ')}`);
    let server;
    try {
      server = await testkit.startPostgres();
    } catch (err) {
      out.postgresError = err instanceof Error ? err.message.split('\n')[0] : String(err);
      return out;
    }
    try {
      const pgs = await store.openPostgresStorage({ url: await server.createDatabase(), max: 16 });
      try {
        await load(pgs, 'warm', 200, 8);
        for (const c of levels) out.postgres[c] = await load(pgs, `c${c}`, turns, c);
      } finally {
        await pgs.close();
      }
      log(`storage: postgres ${levels.map((c) => `${c}×: ${out.postgres[c].turnsPerSec} turns/s`).join(', ')}`);
    } finally {
      await server.destroy();
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Table rows: turns/s and latency per engine and level (no targets: issue 20 compares replicas against these). */
export function storageRows(r) {
  const rows = [];
  for (const engine of ['sqlite', 'postgres']) {
    for (const c of r.levels) {
      const m = r[engine][c];
      if (!m) continue;
      rows.push(figureRow(`storage: ${engine}, turn writes, ${c} session(s) at once`, 'turns/s', m.turnsPerSec, 'higher'));
      rows.push(figureRow(`storage: ${engine}, ${c} session(s) at once, p50 per turn`, 'ms', m.p50Ms));
      rows.push(figureRow(`storage: ${engine}, ${c} session(s) at once, p99 per turn`, 'ms', m.p99Ms));
    }
  }
  if (r.postgresError) rows.push(figureRow(`storage: postgres n/a (${r.postgresError})`, '', null));
  return rows;
}
