import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Why an address may not be fetched: the ipaddr.js range name (`loopback`, `private`,
 * `linkLocal`, `carrierGradeNat`, `multicast`, `unspecified`, `uniqueLocal`, `reserved`, …), or
 * `undefined` for a public unicast address. IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are
 * judged as the IPv4 address they carry; other IPv6 forms that embed an IPv4 address (NAT64,
 * 6to4, Teredo) are refused whole, since the IPv4 address they reach cannot be told safely.
 * An unparsable address is refused (`invalid`).
 */
export function blockedRange(address: string): string | undefined {
  const bare = address.replace(/^\[(.*)\]$/u, '$1');
  if (isIP(bare) === 0) return 'invalid';
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(bare);
  } catch {
    return 'invalid';
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : range;
}

/** The host of a URL without IPv6 brackets, lower case, without a trailing dot. */
export function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[(.*)\]$/u, '$1')
    .toLowerCase()
    .replace(/\.$/u, '');
}

/** The URL's port, or the scheme's default (80, 443). */
export function effectivePort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * Normalises one `tools.webFetch.allowPrivate` entry or a URL's host and port to the form they are
 * compared in: `host:port` with a lower-case host, IPv6 in brackets (`[::1]:8080`).
 */
export function hostPortKey(host: string, port: number): string {
  const h = bareHost(host);
  return `${isIP(h) === 6 ? `[${h}]` : h}:${port}`;
}

/**
 * Parses an `allowPrivate` entry (`host:port`, `[v6]:port`); undefined when it is not one. The
 * host is taken as the WHATWG URL parser reads it, so `2130706433:80` and `127.0.0.1:80` name the
 * same target.
 */
export function parseHostPort(entry: string): string | undefined {
  const m = /^(\[[^\]]+\]|[^:/?#@[\]\s]+):(\d{1,5})$/u.exec(entry.trim());
  if (!m?.[1] || !m[2]) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65_535) return undefined;
  try {
    const url = new URL(`http://${m[1]}:${port}/`);
    return hostPortKey(url.hostname, port);
  } catch {
    return undefined;
  }
}
