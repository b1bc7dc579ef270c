// Load generation over real WebSocket connections: one connection per session (principal),
// closed-loop workers, latency = client `message` send -> `final` frame.
import WebSocket from 'ws';
import { cpuMsOf, loadAvg1, machineBusyMs, memOf, selfCpuMs } from './proc.mjs';
import { summarize } from './stats.mjs';

/** One WebSocket connection speaking the gateway's chat protocol (docs/protocol.md). */
export class ChatConnection {
  constructor(ws, label) {
    this.ws = ws;
    this.label = label;
    this.pending = new Map(); // clientId -> { t0, acceptedAt, resolve, timer, toolErrors, deltas }
    this.closed = null;
    this.frameErrors = 0;
    /** Turns completed on this connection (= history length of its session, for the gateway). */
    this.turns = 0;
    ws.on('message', (data) => this.onFrame(data));
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const [id, p] of this.pending) this.settle(id, p, { ok: false, code: `closed_${code}` });
    });
    ws.on('error', () => undefined);
  }

  /**
   * Opens a connection. `token`: Authorization bearer (gateway); `expectHello`: wait for
   * `hello_ok` (the gateway sends it on open; the bare baseline sends nothing).
   */
  static open(url, { token, expectHello = true, label = url, timeoutMs = 10_000 } = {}) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, perMessageDeflate: false });
      let conn;
      const timer = setTimeout(() => {
        ws.terminate();
        reject(new Error(`${label}: no ${expectHello ? 'hello_ok' : 'open'} within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = (err) => {
        clearTimeout(timer);
        if (err) {
          ws.terminate();
          reject(err);
        } else resolve(conn);
      };
      ws.once('unexpected-response', (_req, res) => done(new Error(`${label}: upgrade refused with HTTP ${res.statusCode}`)));
      ws.once('error', (err) => done(err));
      ws.once('open', () => {
        conn = new ChatConnection(ws, label);
        if (!expectHello) return done();
        conn.onHello = () => done();
      });
      ws.once('close', (code) => done(new Error(`${label}: closed (${code}) before ready`)));
    });
  }

  onFrame(data) {
    let f;
    try {
      f = JSON.parse(data.toString());
    } catch {
      this.frameErrors++;
      return;
    }
    switch (f.type) {
      case 'hello_ok':
        // The principal this connection chats as (its files live in its own workspace).
        if (typeof f.principalId === 'string') this.principalId = f.principalId;
        this.onHello?.();
        this.onHello = undefined;
        return;
      case 'accepted': {
        const p = this.pending.get(f.clientId);
        if (!p) return;
        p.acceptedAt = performance.now();
        // `turnId: null`: the boundary did not admit the message (rate limit, policy); no final follows.
        if (f.turnId === null) this.settle(f.clientId, p, { ok: false, code: 'not_admitted', message: this.lastNotice ?? '' });
        return;
      }
      case 'session_reset':
        this.onReset?.(true);
        return;
      case 'notice':
        this.lastNotice = String(f.message ?? f.text ?? '').slice(0, 120);
        return;
      case 'delta': {
        const p = this.pending.get(f.clientId);
        if (p) p.deltas++;
        return;
      }
      case 'tool': {
        const p = this.pending.get(f.clientId);
        if (p && f.phase === 'end') p.toolCalls++;
        if (p && f.isError) p.toolErrors++;
        return;
      }
      case 'final': {
        const p = this.pending.get(f.clientId);
        if (p) this.turns++;
        if (p) this.settle(f.clientId, p, { ok: true, text: f.text, reason: f.reason });
        return;
      }
      case 'error': {
        if (this.onReset && this.pending.size === 0 && (f.code === 'unknown_frame' || f.code === 'bad_frame')) {
          this.onReset(false);
          return;
        }
        const p = f.clientId !== undefined ? this.pending.get(f.clientId) : this.pending.size === 1 ? [...this.pending.values()][0] : undefined;
        const id = f.clientId ?? [...this.pending.keys()][0];
        if (p) this.settle(id, p, { ok: false, code: f.code ?? 'error', message: f.message });
        else this.frameErrors++;
        return;
      }
      default:
        return;
    }
  }

  settle(id, p, outcome) {
    this.pending.delete(id);
    clearTimeout(p.timer);
    const t1 = performance.now();
    p.resolve({
      ...outcome,
      ms: t1 - p.t0,
      acceptedMs: p.acceptedAt !== undefined ? p.acceptedAt - p.t0 : null,
      deltas: p.deltas,
      toolCalls: p.toolCalls,
      toolErrors: p.toolErrors,
    });
  }

  /**
   * Starts a fresh session for this principal (`new_session` -> `session_reset`): the next
   * message begins an empty history. Resolves false when the gateway does not know the frame.
   */
  newSession(timeoutMs = 5_000) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.onReset = undefined;
        reject(new Error(`${this.label}: no session_reset within ${timeoutMs} ms`));
      }, timeoutMs);
      this.onReset = (ok) => {
        clearTimeout(timer);
        this.onReset = undefined;
        if (ok) this.turns = 0;
        resolve(ok);
      };
      this.ws.send(JSON.stringify({ type: 'new_session' }));
    });
  }

  /** Sends one `message` and resolves when its `final` (or a turn `error`) arrives; never rejects. */
  turn(clientId, text, timeoutMs = 15_000) {
    return new Promise((resolve) => {
      if (this.closed || this.ws.readyState !== WebSocket.OPEN) {
        resolve({ ok: false, code: 'not_open', ms: 0 });
        return;
      }
      const p = { t0: performance.now(), acceptedAt: undefined, resolve, timer: undefined, deltas: 0, toolCalls: 0, toolErrors: 0 };
      p.timer = setTimeout(() => this.settle(clientId, p, { ok: false, code: 'timeout' }), timeoutMs);
      this.pending.set(clientId, p);
      this.ws.send(JSON.stringify({ type: 'message', clientId, text }));
    });
  }

  close() {
    return new Promise((resolve) => {
      if (this.closed || this.ws.readyState === WebSocket.CLOSED) return resolve();
      const timer = setTimeout(() => {
        this.ws.terminate();
        resolve();
      }, 2_000);
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.ws.close(1000);
    });
  }
}

let runSeq = 0;

/**
 * Runs a closed-loop load: `concurrency` workers, each with its own disjoint slice of `pool`
 * (worker w uses pool[w], pool[w + c], pool[w + 2c], ... in turn, so no two workers ever
 * share a session), `warmupPerWorker` unmeasured turns each, then `turns` measured turns in all.
 *
 * `check(result, text)` may return an error string for a wrong answer. `serverPid` is sampled
 * for CPU time. Stops issuing turns after `deadline` (performance.now() ms) and marks the result
 * `truncated`. Aborts (marks `aborted`) after `maxErrors` failed turns.
 */
export async function runLoad({
  name,
  pool,
  concurrency,
  turns,
  warmupPerWorker = 3,
  text = (i) => `ping ${i}`,
  check,
  serverPid,
  deadline = Infinity,
  turnTimeoutMs = 15_000,
  maxErrors = 20,
  onProgress,
  freshSessions = false,
  onMeasureStart,
  onMeasureEnd,
}) {
  if (pool.length < concurrency) throw new Error(`${name}: pool of ${pool.length} connections < concurrency ${concurrency}`);
  const run = ++runSeq;
  const slices = Array.from({ length: concurrency }, (_, w) => pool.filter((_c, i) => i % concurrency === w));
  const errors = [];
  const errorCodes = {};
  let aborted = false;
  let truncated = false;
  let wrong = 0;
  let seq = 0;

  const one = async (w, k, measured, latencies, accepts) => {
    const conn = slices[w][k % slices[w].length];
    const n = ++seq;
    const body = text(n);
    const r = await conn.turn(`b${run}-${w}-${n}`, body, turnTimeoutMs);
    if (!r.ok) {
      errorCodes[r.code] = (errorCodes[r.code] ?? 0) + 1;
      if (errors.length < 5) errors.push(`${conn.label}: ${r.code}${r.message ? ` ${r.message}` : ''}`);
      if (Object.values(errorCodes).reduce((a, b) => a + b, 0) >= maxErrors) aborted = true;
      return false;
    }
    const bad = check?.(r, body);
    if (bad) {
      wrong++;
      if (errors.length < 5) errors.push(`${conn.label}: ${bad}`);
    }
    if (measured) {
      latencies.push(r.ms);
      if (r.acceptedMs !== null) accepts.push(r.acceptedMs);
    }
    return true;
  };

  // Fresh sessions (empty histories) for every connection of the pool, when the server knows `new_session`.
  let sessionsReset = null;
  if (freshSessions) {
    const oks = await Promise.all(pool.map((c) => c.newSession()));
    sessionsReset = oks.every(Boolean);
  }

  // Warm-up: every worker, every one of its sessions at least once (and `warmupPerWorker` turns).
  await Promise.all(
    slices.map(async (slice, w) => {
      const n = Math.max(warmupPerWorker, slice.length);
      for (let k = 0; k < n && !aborted && performance.now() < deadline; k++) await one(w, k, false, [], []);
    }),
  );

  const latencies = [];
  const accepts = [];
  const historyAtStart = pool.reduce((n, c) => n + c.turns, 0) / pool.length;
  const perWorker = Array.from({ length: concurrency }, (_, w) => Math.floor(turns / concurrency) + (w < turns % concurrency ? 1 : 0));
  await onMeasureStart?.();
  const cpu0 = serverPid ? cpuMsOf(serverPid) : null;
  const self0 = selfCpuMs();
  const machine0 = machineBusyMs();
  const load0 = loadAvg1();
  let completed = 0;
  const t0 = performance.now();
  await Promise.all(
    perWorker.map(async (count, w) => {
      for (let k = 0; k < count; k++) {
        if (aborted) return;
        if (performance.now() > deadline) {
          truncated = true;
          return;
        }
        if (await one(w, k + warmupPerWorker, true, latencies, accepts)) {
          completed++;
          onProgress?.(completed);
        }
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu1 = serverPid ? cpuMsOf(serverPid) : null;
  const self1 = selfCpuMs();
  const machine1 = machineBusyMs();
  const measured = (await onMeasureEnd?.()) ?? null;
  const lat = summarize(latencies);
  const acc = summarize(accepts);
  const failed = Object.values(errorCodes).reduce((a, b) => a + b, 0);
  return {
    name,
    concurrency,
    turnsPlanned: turns,
    turnsCompleted: completed,
    failed,
    wrongAnswers: wrong,
    errorCodes,
    errorSamples: errors,
    aborted,
    truncated,
    sessionsReset,
    historyTurnsAtStart: historyAtStart,
    wallMs,
    turnsPerSec: completed / (wallMs / 1000),
    latencyMs: lat,
    acceptedMs: acc,
    serverCpuMsPerTurn: cpu0 !== null && cpu1 !== null && completed > 0 ? (cpu1 - cpu0) / completed : null,
    serverCpuUtil: cpu0 !== null && cpu1 !== null ? (cpu1 - cpu0) / wallMs : null,
    benchCpuUtil: (self1 - self0) / wallMs,
    // CPU (in cores) used by every other process on the machine meanwhile: > 0.2 means the numbers are disturbed.
    otherCpuCores:
      machine0 !== null && machine1 !== null && cpu0 !== null && cpu1 !== null
        ? Math.max(0, (machine1 - machine0 - (cpu1 - cpu0) - (self1 - self0)) / wallMs)
        : null,
    loadAvg1: { start: load0, end: loadAvg1() },
    serverRssAfterMB: serverPid ? memOf(serverPid).rssMB : null,
    /** Whatever `onMeasureEnd` returned (e.g. the server's own stats). */
    measured,
  };
}
