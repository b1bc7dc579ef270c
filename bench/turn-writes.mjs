#!/usr/bin/env node
// The store's CPU for the writes of one text turn, in this process, on a WAL database file: the
// write sequence the engine used before the transaction merge (begin with the user entry; the
// assistant entry; the final's ledger row; the end) against one `turns.finish` carrying both
// entries and the ledger row. Accept is the same in both and not counted. See bench/README.md.
//
//   node bench/turn-writes.mjs [--turns 3000] [--rounds 5]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, round } from './lib/stats.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { openSqliteStorage } = await import(join(here, '..', 'packages', 'store', 'dist', 'index.js'));
const { values: args } = parseArgs({ options: { turns: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '5' } } });
const turns = Math.max(100, Number(args.turns) || 3000);
const rounds = Math.max(1, Number(args.rounds) || 5);
const dir = mkdtempSync(join(tmpdir(), 'swb-turn-writes-'));

const usage = { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, models: {}, retries: 0, fallbackUsed: false };
const message = (i) => ({
  dedupeKey: `m${i}`,
  channel: 'websocket',
  account: 'default',
  conversation: { channel: 'websocket', account: 'default', id: `p${i % 32}`, kind: 'dm' },
  sender: { identity: `ws:p${i % 32}`, isBot: false },
  kind: 'dm',
  mentioned: false,
  text: `ping ${i}`,
  platformId: `m${i}`,
  receivedAt: new Date(),
  principalId: `p${i % 32}`,
});
const key = (i) => ({ agent: 'main', channel: 'websocket', account: 'default', scope: 'dm', principalId: `p${i % 32}` });
const user = (turnId, i) => ({ kind: 'user', turnId, payload: { content: [{ type: 'text', text: `ping ${i}` }] } });
const answer = (turnId, i) => ({ kind: 'assistant', turnId, payload: { content: [{ type: 'text', text: `echo: ping ${i}` }], model: 'm' } });

const final = (turnId, i) => ({
  turnId,
  part: 0,
  kind: 'final',
  channel: 'websocket',
  account: 'default',
  conversationId: `p${i % 32}`,
  platformMessageId: null,
  content: { text: `echo: ping ${i}`, state: 'completed', reason: 'completed', clientId: null },
});

const ways = {
  /** Before: four transactions. */
  separate: async (s, turnId, sessionId, i) => {
    await s.turns.begin(turnId, [user(turnId, i)]);
    await s.sessions.append(sessionId, [answer(turnId, i)]);
    await s.deliveries.record(final(turnId, i));
    await s.turns.setState(turnId, 'completed', { reason: 'completed', usage });
  },
  /** After: one. */
  merged: async (s, turnId, _sessionId, i) => {
    await s.turns.finish(turnId, { state: 'completed', reason: 'completed', usage, entries: [user(turnId, i), answer(turnId, i)], delivery: final(turnId, i) });
  },
};

const results = { separate: [], merged: [] };
let n = 0;
for (let r = 0; r < rounds; r++) {
  for (const [name, write] of Object.entries(ways)) {
    const s = openSqliteStorage({ file: join(dir, `${name}-${r}.db`) });
    const accepted = [];
    for (let i = 0; i < turns; i++) accepted.push(await s.turns.accept(message(n++), { key: key(i), clientId: null }));
    const t0 = process.cpuUsage();
    for (const [i, a] of accepted.entries()) await write(s, a.turnId, a.sessionId, i);
    const t = process.cpuUsage(t0);
    results[name].push((t.user + t.system) / 1000 / turns);
    s.close();
  }
}
rmSync(dir, { recursive: true, force: true });
const out = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, { medianCpuMsPerTurn: round(median(v), 4), runs: v.map((x) => round(x, 4)) }]));
process.stdout.write(`${JSON.stringify({ turns, rounds, ...out })}\n`);
