/**
 * The test suite's network guard: no test, and no process a test spawns, may reach anything but
 * this machine. Loaded by vitest's `setupFiles` and (through `NODE_OPTIONS=--import …`, see
 * `noEgressNodeOptions`) by every gateway and CLI process the harness spawns. Once installed, a
 * TCP/TLS connection (`net.connect`, `tls.connect`, `http`, `fetch` — undici connects through
 * `net`) or a `dns.lookup` to anything but a loopback address or `localhost` throws
 * `EgressRefusedError` before any packet leaves, so a test that forgets to point a platform,
 * model or search URL at a fake fails loudly instead of sending canary credentials out.
 *
 * Each refusal is also appended to the run log (`SWITCHBOARD_RUN_LOG`) and to the egress record
 * (`SWITCHBOARD_EGRESS_LOG`, default `test-results/egress-refused`): the canary scan fails the run
 * when the record exists, even if the code that was refused swallowed the error and retried.
 */
import dns from 'node:dns';
import { appendFileSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { testResultsDir } from './run-log.js';

/** The error a refused connection or lookup throws. */
export class EgressRefusedError extends Error {
  readonly code = 'ERR_TEST_EGRESS';
  constructor(readonly target: string) {
    super(`no-egress guard: refused a connection to ${target} (tests may only reach loopback; point this URL at a fake)`);
    this.name = 'EgressRefusedError';
  }
}

const INSTALLED = Symbol.for('switchboard.testkit.noEgress');

/** Whether `host` (a name or an IP literal, brackets allowed) stays on this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  if (net.isIPv4(v4)) return v4.startsWith('127.') || v4 === '0.0.0.0';
  if (net.isIPv6(h)) return h === '::1' || h === '::' || /^(0{1,4}:){7}0{0,3}1$/.test(h) || /^0{0,4}(:0{0,4}){6}:0{0,4}$/.test(h);
  return false;
}

/** The file refusals are recorded in (the canary scan fails the run when it exists). */
export function egressRecordPath(): string {
  const fromEnv = process.env.SWITCHBOARD_EGRESS_LOG;
  return fromEnv && fromEnv.trim() !== '' ? fromEnv : join(testResultsDir(), 'egress-refused');
}

function record(target: string): void {
  const line = `[no-egress:${process.pid}] refused ${target} (${process.argv.slice(1).join(' ').slice(0, 200)})\n`;
  // The record first, then stderr: whoever sees the line can rely on the record being there.
  try {
    const file = egressRecordPath();
    mkdirSync(dirname(file), { recursive: true });
    appendFileSync(file, line);
    if (process.env.SWITCHBOARD_RUN_LOG) appendFileSync(process.env.SWITCHBOARD_RUN_LOG, line);
  } catch {
    // recording is best effort; the throw below is what matters
  }
  try {
    process.stderr.write(line);
  } catch {
    // a closed stderr does not stop the refusal
  }
}

function refuse(target: string): never {
  record(target);
  throw new EgressRefusedError(target);
}

/** Host and port of a `Socket#connect` call in any of its forms; undefined for a Unix socket or pipe. */
function connectTarget(args: unknown[]): { host: string; port: unknown } | undefined {
  // net.connect() normalizes its arguments into an array before calling Socket#connect.
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (first !== null && typeof first === 'object') {
    const o = first as { path?: unknown; host?: unknown; port?: unknown };
    if (typeof o.path === 'string') return undefined;
    return { host: typeof o.host === 'string' && o.host !== '' ? o.host : 'localhost', port: o.port };
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return undefined; // a path
  return { host: typeof args[1] === 'string' && args[1] !== '' ? args[1] : 'localhost', port: first };
}

/** Whether the guard is installed in this process. */
export function noEgressGuardInstalled(): boolean {
  return (globalThis as Record<symbol, unknown>)[INSTALLED] === true;
}

/** Installs the guard in this process (idempotent). */
export function installNoEgressGuard(): void {
  const g = globalThis as Record<symbol, unknown>;
  if (g[INSTALLED]) return;
  g[INSTALLED] = true;
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const t = connectTarget(args);
    if (t && !isLoopbackHost(t.host)) refuse(`${t.host}:${String(t.port)}`);
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof connect;
  const lookup = dns.lookup;
  dns.lookup = function guardedLookup(hostname: unknown, ...rest: unknown[]) {
    if (typeof hostname === 'string' && !isLoopbackHost(hostname)) refuse(`${hostname} (dns.lookup)`);
    return (lookup as (...a: unknown[]) => unknown).apply(dns, [hostname, ...rest]);
  } as typeof dns.lookup;
  const lookupAsync = dns.promises.lookup;
  dns.promises.lookup = function guardedLookupAsync(hostname: unknown, ...rest: unknown[]) {
    if (typeof hostname === 'string' && !isLoopbackHost(hostname)) refuse(`${hostname} (dns.promises.lookup)`);
    return (lookupAsync as (...a: unknown[]) => unknown).apply(dns.promises, [hostname, ...rest]);
  } as typeof dns.promises.lookup;
}

/** The compiled module that installs the guard when imported (`node --import <this>`). */
export function noEgressRegisterUrl(): string {
  return pathToFileURL(fileURLToPath(new URL('./no-egress-register.js', import.meta.url))).href;
}

/** `NODE_OPTIONS` for a child process: `--import` of the guard, plus whatever `existing` held. */
export function noEgressNodeOptions(existing = ''): string {
  const flag = `--import=${noEgressRegisterUrl()}`;
  return existing.includes(flag) ? existing : `${flag}${existing ? ` ${existing}` : ''}`;
}
