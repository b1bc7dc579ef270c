import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddressResolver, parseProxyRange } from '../src/client-address.js';

const req = (remoteAddress: string, xff?: string | string[]) =>
  ({ socket: { remoteAddress }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } }) as unknown as IncomingMessage;

describe('clientAddressResolver', () => {
  it('with no trusted proxies, uses the socket address whatever X-Forwarded-For says', () => {
    const resolve = clientAddressResolver([]);
    expect(resolve(req('127.0.0.1', '203.0.113.9'))).toBe('127.0.0.1');
    expect(resolve(req('::ffff:10.0.0.1', '203.0.113.9'))).toBe('10.0.0.1');
  });

  it('behind a trusted proxy, takes the right-most untrusted hop', () => {
    const resolve = clientAddressResolver(['10.0.0.0/8', '::1']);
    expect(resolve(req('10.0.0.5', '203.0.113.9'))).toBe('203.0.113.9');
    // A left-most entry the client forged is not reached.
    expect(resolve(req('10.0.0.5', '198.51.100.1, 203.0.113.9'))).toBe('203.0.113.9');
    // Trusted hops are skipped; repeated headers are one list.
    expect(resolve(req('10.0.0.5', ['198.51.100.1', '203.0.113.9, 10.1.1.1']))).toBe('203.0.113.9');
    expect(resolve(req('::1', '2001:db8:5:6::77'))).toBe('2001:db8:5:6::/64');
    expect(resolve(req('::ffff:10.0.0.5', '::ffff:203.0.113.10'))).toBe('203.0.113.10');
  });

  it('ignores X-Forwarded-For from a peer that is not trusted, and stops at a malformed hop', () => {
    const resolve = clientAddressResolver(['10.0.0.0/8']);
    expect(resolve(req('192.0.2.1', '203.0.113.9'))).toBe('192.0.2.1');
    expect(resolve(req('10.0.0.5'))).toBe('10.0.0.5');
    expect(resolve(req('10.0.0.5', '203.0.113.9, garbage'))).toBe('10.0.0.5');
    expect(resolve(req('10.0.0.5', '10.0.0.6'))).toBe('10.0.0.6');
  });

  it('parses addresses and CIDR ranges, and refuses anything else', () => {
    expect(parseProxyRange('10.0.0.0/8')).not.toBeNull();
    expect(parseProxyRange('fd00::/8')).not.toBeNull();
    expect(parseProxyRange('127.0.0.1')).not.toBeNull();
    expect(parseProxyRange('10.0.0.0/33')).toBeNull();
    expect(parseProxyRange('proxy.example')).toBeNull();
    expect(() => clientAddressResolver(['nope'])).toThrow(/gateway\.trustedProxies/);
  });
});
