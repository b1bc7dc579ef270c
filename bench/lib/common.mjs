// Pieces shared by bench/run.mjs, bench/profile.mjs and the standalone loads.
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The compiled testkit, imported with its run log and canary record in a fresh temp folder
 * (a `mkdtemp` folder named after `prefix`, the bench's own, never the tests'). Exits 2, naming `name`, when it is not built.
 */
export async function loadBenchTestkit(name, prefix) {
  const compiled = join(REPO, 'packages', 'testkit', 'dist', 'index.js');
  if (!existsSync(compiled)) {
    process.stderr.write(`${name}: ${compiled} is missing; build first: npx tsc -b\n`);
    process.exit(2);
  }
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  process.env.SWITCHBOARD_RUN_LOG = join(tmp, 'run.log');
  process.env.SWITCHBOARD_CANARY_SEEN = join(tmp, 'canary-key-seen');
  return { tk: await import(compiled), tmp };
}

/**
 * The gateway config for the bench, deep-merged over the testkit's base test config (loopback,
 * port 0, data dir, the fake's URL and key, one WebSocket account): log.level warn, and the
 * base's test system prompt and maxTokens removed so the gateway's own defaults apply.
 */
export const GATEWAY_CONFIG = {
  log: { level: 'warn' },
  model: { maxTokens: undefined },
  agents: { default: { systemPrompt: undefined } },
};

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Rejects if `p` has not settled within `ms`. */
export function within(ms, what, p) {
  let timer;
  return Promise.race([
    p,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Runs `fn` over `items` with at most `n` at a time; resolves with the results in order. */
export async function mapLimit(items, n, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/** `switchboard token create --kind client --principal <name> --role member` -> the secret. */
export async function createClientToken(tk, gw, principal) {
  const r = await tk.runCli(['token', 'create', '--kind', 'client', '--principal', principal, '--role', 'member'], {
    gateway: { configPath: gw.configPath }, // not gw.env: no profiler flags for the CLI
    timeoutMs: 30_000,
  });
  if (r.code !== 0) throw new Error(`token create ${principal} failed (${r.code}): ${r.stderr.trim()}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)).secret;
}

/** Polls GET /readyz every 2 ms until 200; resolves with performance.now() at the 200. */
export async function waitReady(url, timeoutMs = 10_000) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/readyz`);
      await res.arrayBuffer();
      if (res.status === 200) return performance.now();
    } catch {
      // not accepting yet
    }
    if (performance.now() > end) throw new Error(`${url}/readyz not 200 within ${timeoutMs} ms`);
    await sleep(2);
  }
}

export const checkEcho = (r, sent) => (r.text === `echo: ${sent}` ? undefined : `unexpected answer ${JSON.stringify(r.text).slice(0, 80)}`);

export const WORKSPACE_FILE = 'notes.txt';
export const MARKER = 'bench-marker-7f3a';
export const WORKSPACE_TEXT = `${MARKER}\n${Array.from({ length: 20 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join('\n')}\n`;

/** The fake's answer in the tool scenario: read_file first, then text once the tool_result is in. */
export function toolHandler(rec) {
  const last = rec.body.messages?.at(-1);
  if (last?.role === 'user' && Array.isArray(last.content)) {
    const results = last.content.filter((b) => b.type === 'tool_result');
    if (results.length > 0) {
      const body = results.map((r) => (typeof r.content === 'string' ? r.content : JSON.stringify(r.content ?? ''))).join('\n');
      return { text: body.includes(MARKER) && !results.some((r) => r.is_error) ? 'file ok' : 'file not read' };
    }
  }
  return { toolUses: [{ name: 'read_file', input: { path: WORKSPACE_FILE } }] };
}

export const checkTool = (r) =>
  r.toolCalls === 1 && r.toolErrors === 0 && r.text === 'file ok'
    ? undefined
    : `tool turn: ${r.toolCalls} call(s), ${r.toolErrors} error(s), answer ${JSON.stringify(r.text).slice(0, 60)}`;

/** The most the boundary's per-sender token bucket allows (config-channels.ts: burst ≤ 1000, perMinute ≤ 6000). */
export const BENCH_RATE_LIMIT = { burst: 1000, perMinute: 6000 };

/**
 * Raises the WebSocket account's per-sender rate limit through the control API (operator
 * override, `PUT /api/v1/channels/websocket:default/policy`): the default bucket (burst 10,
 * 20/min) would cap every bench session at 20 turns a minute. Returns what happened, for the
 * results; a gateway without the route (no boundary yet) gets `{ applied: false }`.
 */
export async function raiseRateLimit(tk, gw) {
  const { operatorToken } = gw.credentials();
  const res = await tk.api(gw, 'PUT', '/api/v1/channels/websocket:default/policy', { token: operatorToken, body: { rateLimit: BENCH_RATE_LIMIT } });
  if (res.status === 200) return { applied: true, effective: res.json?.effective?.rateLimit ?? null };
  if (res.status === 404) return { applied: false, status: 404, note: 'no boundary policy route: assuming no rate limit' };
  throw new Error(`raising the rate limit failed: HTTP ${res.status} ${res.text.slice(0, 200)}`);
}

/**
 * `GET /api/v1/stats` (operator token): `{ uptimeSec, activeTurns, memory: { rssMB, heapUsedMB },
 * eventLoopDelayMs: { p50, p99, max, samples } }`, the delay since start or the last reset.
 * `reset` returns the figures, then resets. Resolves null when the gateway has no such route.
 */
export async function gatewayStats(tk, gw, reset = false) {
  const res = await tk.api(gw, 'GET', `/api/v1/stats${reset ? '?reset=true' : ''}`, { token: gw.credentials().operatorToken });
  if (res.status === 404) return null;
  if (res.status !== 200) throw new Error(`GET /api/v1/stats: HTTP ${res.status} ${res.text.slice(0, 200)}`);
  return res.json;
}

/**
 * The workspace directory of the person a bench connection chats as (per-person workspaces are the
 * default: `<dataDir>/workspaces/default/people/<principalId>/`), created if missing.
 */
export function personWorkspace(gw, conn) {
  if (!conn.principalId) throw new Error(`${conn.label ?? 'connection'}: no principalId from hello_ok`);
  const dir = join(gw.dataDir, 'workspaces', 'default', 'people', conn.principalId);
  mkdirSync(dir, { recursive: true });
  return dir;
}
