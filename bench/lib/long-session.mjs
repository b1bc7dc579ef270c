// The long-session load: one WebSocket session, N turns (default 500) through the real gateway
// process and the testkit fake model; every turn is a 200-character message, one read_file of a
// 4 KB file in the person's workspace (a 4 KB tool result through the real tool path) and a
// 200-character answer. Measures what grows with a session: request size, server CPU per turn,
// compactions and the prompt cache's hit share. See bench/README.md ("Long session").
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChatConnection } from './load.mjs';
import { GATEWAY_CONFIG, createClientToken, personWorkspace, raiseRateLimit, waitReady, within } from './common.mjs';
import { cpuMsPrecise } from './proc.mjs';
import { round } from './stats.mjs';

/** The turns whose request size is reported (those within the run). */
export const SIZE_TURNS = [10, 100, 250, 500];

const MESSAGE_CHARS = 200;
const RESULT_BYTES = 4096;
const CPU_WINDOW = 10;
const MODEL = 'claude-test';

/** Exactly `n` characters: `head` then filler words (none of them matches /summar/). */
function padTo(head, n) {
  const filler = ' the long session keeps talking about gardens, trains, recipes and the weather in spring';
  let s = head;
  while (s.length < n) s += filler;
  return s.slice(0, n);
}

const marker = (n) => `lsm-${n}-q7`;
const fileOf = (n) => `long/turn-${String(n).padStart(4, '0')}.txt`;

/** The 4 KB file read in turn `n`: its marker on the first line, then numbered lines. */
function fileText(n) {
  const lines = [marker(n)];
  for (let i = 1; lines.join('\n').length < RESULT_BYTES; i++)
    lines.push(`${n}.${i}: record ${i * 7919 + n} lists a parcel, a route and a note about the delivery window`);
  return `${lines.join('\n').slice(0, RESULT_BYTES - 1)}\n`;
}

/** Plain text of a message content (text blocks and tool_result bodies). */
function textOf(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b) => (b?.type === 'text' ? String(b.text ?? '') : b?.type === 'tool_result' ? textOf(b.content) : '')).join('\n');
}

/** Tokens of a request as the fake counts them (4 characters of JSON of system + messages + tools per token). */
function fakeTokens(tk, body) {
  return tk.estimateTokens({ s: body.system, m: body.messages, t: body.tools });
}

/**
 * The gateway config for a window of `window` tokens: `models.claude-test.contextWindow`, and
 * for windows under 100k an `outputReserve` of a tenth of it (the default 20,000 would not fit).
 */
export function longSessionConfig(window) {
  const entry = window < 100_000 ? { contextWindow: window, outputReserve: Math.max(256, Math.round(window / 10)) } : { contextWindow: window };
  return { ...GATEWAY_CONFIG, models: { [MODEL]: entry } };
}

/**
 * Runs the long-session load against its own fake and gateway and stops both. Never throws for a
 * failed turn (failures are counted by code); throws only when the gateway cannot be set up.
 * `opts`: `{ turns = 500, window = 200000, warmupTurns = 40, deadline = Infinity (performance.now() ms), turnTimeoutMs = 30000, log,
 *   gatewayEnv }` (`gatewayEnv`: extra environment of the gateway process, e.g. a profiler preload).
 */
export async function runLongSession(tk, opts = {}) {
  const turns = opts.turns ?? 500;
  const window = opts.window ?? 200_000;
  const warmupTurns = opts.warmupTurns ?? 40;
  const deadline = opts.deadline ?? Number.POSITIVE_INFINITY;
  const turnTimeoutMs = opts.turnTimeoutMs ?? 30_000;
  const log = opts.log ?? (() => undefined);
  const t0 = performance.now();

  // `contextWindow` for a fake that enforces one; the handler below enforces it either way.
  const fake = await tk.startFakeAnthropic({ logSource: 'bench-long-fake', contextWindow: window });
  const connections = [];
  let gw;
  try {
    gw = await tk.startGateway({
      config: longSessionConfig(window),
      modelUrl: fake.url,
      startTimeoutMs: 20_000,
      ...(opts.gatewayEnv ? { env: opts.gatewayEnv } : {}),
    });
    await waitReady(gw.url);
    await raiseRateLimit(tk, gw);
    const [warmToken, token] = [await createClientToken(tk, gw, 'bench-long-warm'), await createClientToken(tk, gw, 'bench-long')];

    let current = 0;
    const refused = new Set();
    const summaryIds = new Set();
    fake.setHandler((rec) => {
      const body = rec.body;
      const tokens = fakeTokens(tk, body);
      if (tokens > window) {
        refused.add(rec.id);
        return { error: { status: 400, type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${window} maximum` } };
      }
      // The gateway's summary call starts with the testkit's summary marker (never a bench message).
      if (tk.isSummaryRequest(rec)) {
        summaryIds.add(rec.id);
        return { text: padTo(`Summary of the conversation so far (through turn ${current}): the person asked for files one by one; each was read.`, 1500) };
      }
      const last = body.messages?.at(-1);
      const results = Array.isArray(last?.content) ? last.content.filter((b) => b?.type === 'tool_result') : [];
      if (results.length === 0) return { toolUses: [{ name: 'read_file', input: { path: fileOf(current) } }] };
      const ok = results.some((r) => textOf(r.content).includes(marker(current)) && !r.is_error);
      return { text: padTo(ok ? `read ${current} ok.` : `read ${current} MISSING.`, MESSAGE_CHARS) };
    });

    const open = async (tok, label) => {
      const c = await ChatConnection.open(gw.wsUrl, { token: tok, expectHello: true, label, timeoutMs: 10_000 });
      connections.push(c);
      return c;
    };
    const prepare = (conn, n) => {
      const dir = personWorkspace(gw, conn);
      mkdirSync(join(dir, 'long'), { recursive: true });
      for (let i = 1; i <= n; i++) writeFileSync(join(dir, fileOf(i)), fileText(i));
    };

    // Warm-up on another person's session (JIT, SQLite pages), so turn 10 is not a cold turn.
    const warm = await open(warmToken, 'long-warm');
    prepare(warm, warmupTurns);
    // Sessions of 10 turns (new_session between them), so even a small window is never reached.
    for (let n = 1; n <= warmupTurns && performance.now() < deadline; n++) {
      if (n > 1 && n % 10 === 1) await warm.newSession();
      current = n;
      await warm.turn(`lw-${n}`, padTo(`turn ${n}: please read ${fileOf(n)} for me.`, MESSAGE_CHARS), turnTimeoutMs);
    }
    fake.requests.splice(0);
    refused.clear();
    summaryIds.clear();

    const conn = await open(token, 'long');
    prepare(conn, turns);
    log(`long session: ${turns} turns, window ${window} tokens, warm-up ${warmupTurns} turns done`);
    const perTurn = [];
    const cpu = [cpuMsPrecise(gw.pid)];
    const usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
    const failures = {};
    const failureSamples = [];
    let wrong = 0;
    let countTokensCalls = 0;
    let truncated = false;
    const tLoad = performance.now();
    for (let n = 1; n <= turns; n++) {
      if (performance.now() > deadline) {
        truncated = true;
        break;
      }
      current = n;
      const r = await conn.turn(`ls-${n}`, padTo(`turn ${n}: please read ${fileOf(n)} for me.`, MESSAGE_CHARS), turnTimeoutMs);
      cpu.push(cpuMsPrecise(gw.pid));
      const reqs = fake.requests.splice(0);
      let maxTokens = 0;
      let maxBytes = 0;
      let calls = 0;
      for (const q of reqs) {
        if (q.path === '/v1/messages/count_tokens') countTokensCalls++;
        if (q.path !== '/v1/messages') continue;
        calls++;
        const u = q.usage;
        if (u) {
          usage.input += u.input_tokens ?? 0;
          usage.cacheRead += u.cache_read_input_tokens ?? 0;
          usage.cacheWrite += u.cache_creation_input_tokens ?? 0;
          usage.output += u.output_tokens ?? 0;
        }
        const tokens = u ? (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) : fakeTokens(tk, q.body);
        maxTokens = Math.max(maxTokens, tokens);
        maxBytes = Math.max(maxBytes, Buffer.byteLength(q.rawBody));
      }
      const refusedHere = reqs.filter((q) => refused.has(q.id)).length;
      const summariesHere = reqs.filter((q) => summaryIds.has(q.id)).length;
      if (!r.ok) {
        failures[r.code] = (failures[r.code] ?? 0) + 1;
        if (failureSamples.length < 5) failureSamples.push(`turn ${n}: ${r.code}${r.message ? ` ${String(r.message).slice(0, 120)}` : ''}`);
      } else if (!String(r.text ?? '').startsWith(`read ${n} ok.`)) {
        wrong++;
        if (failureSamples.length < 5) failureSamples.push(`turn ${n}: wrong answer ${JSON.stringify(String(r.text ?? '').slice(0, 60))}`);
      }
      perTurn.push({ n, ok: r.ok, ms: r.ms, calls, maxTokens, maxBytes, refused: refusedHere, summaries: summariesHere });
      if (n % 100 === 0) log(`long session: turn ${n}, request ${maxTokens} tokens / ${maxBytes} bytes, ${round(performance.now() - tLoad, 0)} ms so far`);
    }
    const loadMs = performance.now() - tLoad;

    // Compactions: `compact` / `microcompact` entries of the session's transcript (control API).
    const transcript = await sessionTranscript(tk, gw, conn.principalId);
    const done = perTurn.length;
    const cpuAt = (endTurn) => {
      const end = Math.min(endTurn, done);
      const start = Math.max(0, end - CPU_WINDOW);
      // null when the gateway was gone at either end (its /proc entry unreadable)
      return end > start && typeof cpu[end] === 'number' && typeof cpu[start] === 'number' ? (cpu[end] - cpu[start]) / (end - start) : null;
    };
    const failedBetween = (endTurn) => perTurn.slice(Math.max(0, endTurn - CPU_WINDOW), endTurn).filter((t) => !t.ok).length;
    const early = Math.min(15, done);
    const cpuEarly = cpuAt(early);
    const cpuLate = cpuAt(done);
    const inputAll = usage.input + usage.cacheRead + usage.cacheWrite;
    const largest = perTurn.reduce((m, t) => Math.max(m, t.maxTokens), 0);
    return {
      turnsPlanned: turns,
      turnsDone: done,
      truncated,
      window,
      modelEntry: longSessionConfig(window).models[MODEL],
      messageChars: MESSAGE_CHARS,
      resultBytes: RESULT_BYTES,
      warmupTurns,
      failed: Object.values(failures).reduce((a, b) => a + b, 0),
      failures,
      wrongAnswers: wrong,
      failureSamples,
      firstFailedTurn: perTurn.find((t) => !t.ok)?.n ?? null,
      sizes: SIZE_TURNS.filter((n) => n <= done).map((n) => ({ turn: n, tokens: perTurn[n - 1].maxTokens, bytes: perTurn[n - 1].maxBytes })),
      largestRequestTokens: largest,
      largestRequestShare: round(largest / window, 4),
      cpuWindows: { early: `turns ${Math.max(1, early - CPU_WINDOW + 1)}–${early}`, late: `turns ${Math.max(1, done - CPU_WINDOW + 1)}–${done}` },
      cpuWindowFailures: { early: failedBetween(early), late: failedBetween(done) },
      cpuMsPerTurnEarly: round(cpuEarly, 3),
      cpuMsPerTurnLate: round(cpuLate, 3),
      cpuGrowth: cpuEarly && cpuLate !== null ? round(cpuLate / cpuEarly, 3) : null,
      cpuMsPerTurnMean: done > 0 && typeof cpu[done] === 'number' && typeof cpu[0] === 'number' ? round((cpu[done] - cpu[0]) / done, 3) : null,
      compactEntries: transcript.compact,
      microcompactEntries: transcript.microcompact,
      transcriptEntries: transcript.entries,
      transcriptError: transcript.error,
      summaryCalls: summaryIds.size,
      refusedRequests: refused.size,
      countTokensCalls,
      modelCalls: perTurn.reduce((a, t) => a + t.calls, 0),
      usage,
      cacheReadShare: inputAll > 0 ? round(usage.cacheRead / inputAll, 4) : null,
      loadWallMs: round(loadMs, 0),
      wallMs: round(performance.now() - t0, 0),
      msPerTurn: done > 0 ? round(loadMs / done, 2) : null,
      perTurn: perTurn.map((t) => ({ ...t, ms: round(t.ms, 1) })),
    };
  } finally {
    await Promise.all(connections.map((c) => c.close().catch(() => undefined)));
    if (gw) await within(15_000, 'long-session gateway stop', gw.stop(5_000)).catch(() => undefined);
    await fake.close().catch(() => undefined);
  }
}

/** Counts the `compact` and `microcompact` entries of the person's newest session (control API). */
async function sessionTranscript(tk, gw, principalId) {
  const token = gw.credentials().operatorToken;
  try {
    const list = await tk.api(gw, 'GET', `/api/v1/sessions?principalId=${encodeURIComponent(principalId)}`, { token });
    const sessions = list.json?.sessions ?? [];
    if (list.status !== 200 || sessions.length === 0)
      return { compact: null, microcompact: null, entries: null, error: `GET /api/v1/sessions: HTTP ${list.status}` };
    let compact = 0;
    let microcompact = 0;
    let entries = 0;
    for (const s of sessions) {
      const t = await tk.api(gw, 'GET', `/api/v1/sessions/${encodeURIComponent(s.id)}/transcript`, { token });
      if (t.status !== 200) return { compact: null, microcompact: null, entries: null, error: `transcript: HTTP ${t.status}` };
      for (const e of t.json?.entries ?? []) {
        entries++;
        if (e.kind === 'compact') compact++;
        else if (e.kind === 'microcompact') microcompact++;
      }
    }
    return { compact, microcompact, entries, error: null };
  } catch (err) {
    return { compact: null, microcompact: null, entries: null, error: err instanceof Error ? err.message : String(err) };
  }
}
