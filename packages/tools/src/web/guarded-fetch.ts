import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import type { Agent, buildConnector } from 'undici';
import { bareHost, blockedRange, effectivePort, hostPortKey } from './address-policy.js';

/** One address a host name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (the default: `dns.lookup` with `all: true`). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * Opens the TCP (or TLS) connection of one request: undici's connector signature. The guard
 * always hands it the checked IP address as `hostname` (and the URL's host name as `servername`
 * for TLS), never a name, so nothing resolves the name a second time.
 */
export type Connector = buildConnector.connector;

/** What a guarded fetch may do. */
export interface GuardSettings {
  /** `host:port` keys (see `hostPortKey`) that may be private, loopback or link-local. */
  allowPrivate: ReadonlySet<string>;
  /** Redirects followed at most (each is checked again). */
  maxRedirects: number;
  /** The whole fetch, redirects and body included. */
  timeoutMs: number;
  /** Bytes of body read at most; the rest is cut. */
  maxBytes: number;
}

/** Test seams: the resolver and the connector. */
export interface GuardDeps {
  resolve?: Resolver;
  connect?: Connector;
}

/** A refusal of the guard or a failure of the fetch, worded for the model. */
export class WebFetchError extends Error {
  constructor(
    message: string,
    /** `redirect`: the server sent the fetch to another host, which the permission rules must judge first (not an error). */
    readonly kind: 'refused' | 'timeout' | 'failed' | 'redirect',
  ) {
    super(message);
    this.name = 'WebFetchError';
  }
}

/** A target that passed the checks: the connection goes to `address`, whatever DNS says later. */
export interface PinnedTarget {
  url: URL;
  host: string;
  port: number;
  address: ResolvedAddress;
}

/** A fetched response (after redirects), with its body read up to the limit. */
export interface FetchedPage {
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** The body was longer than `maxBytes` and was cut there. */
  truncated: boolean;
}

// undici costs ~200 ms to load: it is imported on the first fetch, not at start-up.
let undiciModule: Promise<typeof import('undici')> | undefined;
const loadUndici = () => (undiciModule ??= import('undici'));

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const ACCEPT = 'text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,*/*;q=0.1';

/** The default resolver: every address of the name, in the resolver's order. */
export const systemResolver: Resolver = async (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * The checks that need no DNS: http/https only, no credentials in the URL, an IP-literal host
 * must be public unless its `host:port` is allowed. Throws a `refused` {@link WebFetchError}.
 */
export function checkUrl(raw: string | URL, settings: Pick<GuardSettings, 'allowPrivate'>): URL {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    throw new WebFetchError(`${JSON.stringify(String(raw).slice(0, 200))} is not a valid URL (write an absolute http:// or https:// URL)`, 'refused');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebFetchError(`web_fetch fetches only http:// and https:// URLs, not ${url.protocol}`, 'refused');
  }
  if (url.username !== '' || url.password !== '') throw new WebFetchError('URLs with credentials (user:password@) are refused', 'refused');
  const host = bareHost(url.hostname);
  if (isIP(host) !== 0) refuseBlocked(url, host, host, settings.allowPrivate);
  return url;
}

/** All checks, DNS included: every address of the host must be public unless its `host:port` is allowed. */
export async function checkTarget(
  raw: string | URL,
  settings: Pick<GuardSettings, 'allowPrivate'>,
  resolve: Resolver,
  signal: AbortSignal,
): Promise<PinnedTarget> {
  const url = checkUrl(raw, settings);
  const host = bareHost(url.hostname);
  const port = effectivePort(url);
  let addresses: ResolvedAddress[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await abortable(resolve(host), signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw new WebFetchError(`could not resolve ${host}: ${err instanceof Error ? err.message : String(err)}`, 'failed');
    }
  }
  if (addresses.length === 0) throw new WebFetchError(`${host} has no address`, 'failed');
  for (const a of addresses) refuseBlocked(url, host, a.address, settings.allowPrivate);
  return { url, host, port, address: addresses[0] as ResolvedAddress };
}

function refuseBlocked(url: URL, host: string, address: string, allowPrivate: ReadonlySet<string>): void {
  const range = blockedRange(address);
  if (range === undefined || allowPrivate.has(hostPortKey(host, effectivePort(url)))) return;
  const what = host === bareHost(address) ? `${url.host} is` : `${url.host} resolves to ${address}, which is`;
  throw new WebFetchError(
    `refused: ${what} a ${range} address; web_fetch reaches only public addresses (an operator may allow an exact host:port in tools.webFetch.allowPrivate)`,
    'refused',
  );
}

/**
 * GETs `raw` behind the SSRF guard: each hop (the first URL and every redirect, at most
 * `maxRedirects`) is checked by {@link checkTarget} before any socket opens, and its connection
 * goes to the address that was checked. The body is read up to `maxBytes`. Rejects with a
 * {@link WebFetchError} (or `signal`'s reason when the caller aborted).
 */
export async function guardedFetch(raw: string, settings: GuardSettings, signal: AbortSignal, deps: GuardDeps = {}): Promise<FetchedPage> {
  const resolve = deps.resolve ?? systemResolver;
  const undici = await loadUndici();
  const connect = deps.connect ?? defaultConnector(undici, settings.timeoutMs);
  const timer = new AbortController();
  const timeout = setTimeout(
    () => timer.abort(new WebFetchError(`timed out after ${settings.timeoutMs} ms (tools.webFetch.timeout)`, 'timeout')),
    settings.timeoutMs,
  );
  const both = AbortSignal.any([signal, timer.signal]);
  try {
    let url: string | URL = raw;
    for (let hop = 0; ; hop++) {
      const target = await checkTarget(url, settings, resolve, both);
      const agent = pinnedAgent(undici, target, connect, settings.timeoutMs);
      try {
        const res = await undici.request(target.url, {
          dispatcher: agent,
          method: 'GET',
          headers: { accept: ACCEPT, 'accept-encoding': 'identity', 'user-agent': 'Switchboard-web_fetch/1' },
          signal: both,
        });
        const location = headerOf(res.headers, 'location');
        if (REDIRECTS.has(res.statusCode) && location !== undefined) {
          discard(res.body);
          if (hop >= settings.maxRedirects) throw new WebFetchError(`refused: more than ${settings.maxRedirects} redirects`, 'refused');
          let next: URL;
          try {
            next = new URL(location, target.url);
          } catch {
            throw new WebFetchError(`the redirect to ${JSON.stringify(location.slice(0, 200))} is not a valid URL`, 'failed');
          }
          // Another host is another permission decision (its domain rules, its ask): stop and let the model fetch it.
          if (next.hostname !== target.url.hostname) {
            // Refused outright when the guard refuses it (a private target), else handed back.
            await checkTarget(next, settings, resolve, both);
            throw new WebFetchError(
              `redirected (HTTP ${res.statusCode}) to ${next.href.slice(0, 500)}, on another host; to follow it, call web_fetch with that URL`,
              'redirect',
            );
          }
          url = next;
          continue;
        }
        const { body, truncated } = await readLimited(res.body, settings.maxBytes);
        return { url: target.url.href, status: res.statusCode, contentType: headerOf(res.headers, 'content-type') ?? '', body, truncated };
      } finally {
        agent.destroy().catch(() => {});
      }
    }
  } catch (err) {
    if (timer.signal.aborted && !signal.aborted) throw timer.signal.reason;
    if (signal.aborted || err instanceof WebFetchError) throw signal.aborted ? signal.reason : err;
    throw new WebFetchError(`the fetch failed: ${err instanceof Error ? err.message : String(err)}`, 'failed');
  } finally {
    clearTimeout(timeout);
  }
}

/** An agent whose every connection goes to the checked address of `target` (and only for its host). */
function pinnedAgent(undici: typeof import('undici'), target: PinnedTarget, connect: Connector, timeoutMs: number): Agent {
  const tls = target.url.protocol === 'https:';
  const pinned: Connector = (opts, callback) => {
    if (bareHost(opts.hostname) !== target.host) {
      callback(new Error(`the pinned connector of ${target.host} was asked for ${opts.hostname}`), null);
      return;
    }
    const servername = tls && isIP(target.host) === 0 ? target.host : undefined;
    connect({ ...opts, hostname: target.address.address, ...(servername !== undefined ? { servername } : {}) }, callback);
  };
  return new undici.Agent({ connect: pinned, connections: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
}

/**
 * undici's connector with a `lookup` that refuses every name: the guard passes only checked IP
 * addresses (for which Node never calls `lookup`), so a name reaching it is a bug, and it must not
 * be resolved again behind the guard's back.
 */
function defaultConnector(undici: typeof import('undici'), timeoutMs: number): Connector {
  return undici.buildConnector({
    timeout: timeoutMs,
    lookup: (hostname, _options, callback) => callback(new Error(`web_fetch connects only to checked addresses, not to the name ${hostname}`), '', 4),
  });
}

async function readLimited(body: Discardable & AsyncIterable<unknown>, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    if (total + buf.length > maxBytes) {
      chunks.push(buf.subarray(0, maxBytes - total));
      discard(body);
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(buf);
    total += buf.length;
  }
  return { body: Buffer.concat(chunks), truncated: false };
}

interface Discardable {
  on(event: 'error', listener: () => void): unknown;
  destroy(): unknown;
}

/** Stops reading a body: its connection is closed, and the abort error that destroying it emits is expected. */
function discard(body: Discardable): void {
  body.on('error', () => {});
  body.destroy();
}

function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = Object.hasOwn(headers, name) ? headers[name] : undefined;
  return Array.isArray(v) ? v[0] : v;
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
