import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import { addressKey } from './auth-limiter.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses an address or CIDR (`10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`); null when it is neither. */
export function parseProxyRange(text: string): Range | null {
  try {
    if (text.includes('/')) return ipaddr.parseCIDR(text);
    const a = ipaddr.parse(text);
    return [a, a.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

function normalize(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const t = text.trim().replace(/%.*$/, '');
  if (!ipaddr.isValid(t)) return null;
  const a = ipaddr.parse(t);
  return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() ? (a as ipaddr.IPv6).toIPv4Address() : a;
}

/**
 * Finds the client behind a request. With no trusted proxies (the default) it is the socket's
 * peer, whatever `X-Forwarded-For` says. When the peer is a trusted proxy, the `X-Forwarded-For`
 * list is read from the right (the entry the proxy appended) past every trusted hop; the first
 * untrusted entry is the client. Returns {@link addressKey}'s form (IPv6 aggregated by /64).
 */
export function clientAddressResolver(trustedProxies: readonly string[]): (req: IncomingMessage) => string {
  const ranges = trustedProxies.map((t) => {
    const r = parseProxyRange(t);
    if (!r) throw new Error(`gateway.trustedProxies: ${JSON.stringify(t)} is not an IP address or CIDR range`);
    return r;
  });
  const trusted = (a: ipaddr.IPv4 | ipaddr.IPv6) => ranges.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));
  return (req) => {
    const peer = req.socket.remoteAddress;
    if (ranges.length === 0 || !peer) return addressKey(peer);
    let current = normalize(peer);
    if (!current || !trusted(current)) return addressKey(peer);
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').filter((h) => h.trim() !== '');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = normalize(hops[i]!);
      // A malformed entry ends the walk: the last address we could trust is the answer.
      if (!hop) break;
      current = hop;
      if (!trusted(hop)) break;
    }
    return addressKey(current.toString());
  };
}
