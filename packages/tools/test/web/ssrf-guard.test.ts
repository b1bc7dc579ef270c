import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildConnector } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  blockedRange,
  checkTarget,
  checkUrl,
  type Connector,
  type GuardSettings,
  guardedFetch,
  hostPortKey,
  type Resolver,
  WebFetchError,
} from '../../src/index.js';

// No test here opens a socket to anything but loopback: every name goes through `resolve` below,
// and every connection through `connect`, which records and refuses any other address.
const DNS = new Map<string, string[]>([
  ['private.test', ['10.0.0.5']],
  ['metadata.test', ['169.254.169.254']],
  ['mixed.test', ['93.184.216.34', '10.0.0.1']],
  ['mapped.test', ['::ffff:127.0.0.1']],
  ['ula.test', ['fd00::1']],
  ['public.test', ['93.184.216.34']],
  ['page.test', ['127.0.0.1']],
]);
let lookups: string[] = [];
let attempts: string[] = [];
const resolve: Resolver = async (host) => {
  lookups.push(host);
  const found = DNS.get(host);
  if (!found) throw new Error(`test resolver: unknown host ${host}`);
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const real = buildConnector({});
const LOOPBACK = new Set(['127.0.0.1', '::1']);
const connect: Connector = (opts, callback) => {
  attempts.push(opts.hostname);
  if (!LOOPBACK.has(opts.hostname)) {
    callback(new Error(`test connector: refused ${opts.hostname} (not loopback)`), null);
    return;
  }
  real(opts, callback);
};

let server: Server;
let port = 0;
let other: Server;
let otherPort = 0;
let otherHits = 0;

function listen(s: Server): Promise<number> {
  return new Promise((ok) => s.listen(0, '127.0.0.1', () => ok((s.address() as AddressInfo).port)));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/page') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    } else if (u.pathname === '/to') {
      res.writeHead(302, { location: u.searchParams.get('u') ?? '/' }).end();
    } else if (u.pathname === '/loop') {
      res.writeHead(302, { location: `/loop?n=${Number(u.searchParams.get('n') ?? 0) + 1}` }).end();
    } else if (u.pathname === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    } else if (u.pathname === '/never') {
      // Headers never come: the guard's timer must end the fetch.
    } else res.writeHead(404).end();
  });
  other = createServer((_req, res) => {
    otherHits++;
    res.end('other');
  });
  port = await listen(server);
  otherPort = await listen(other);
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
  other.close();
});
beforeEach(() => {
  lookups = [];
  attempts = [];
  otherHits = 0;
});

function settings(extra: Partial<GuardSettings> = {}): GuardSettings {
  return {
    allowPrivate: new Set([hostPortKey('127.0.0.1', port), hostPortKey('page.test', port)]),
    maxRedirects: 5,
    timeoutMs: 10_000,
    maxBytes: 1024 * 1024,
    ...extra,
  };
}

async function refusal(url: string, s = settings()): Promise<WebFetchError> {
  const err = await guardedFetch(url, s, new AbortController().signal, { resolve, connect }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, url).toBeInstanceOf(WebFetchError);
  return err as WebFetchError;
}

describe('the SSRF guard refuses before any socket opens', () => {
  it.each([
    'http://10.0.0.1/',
    'http://172.16.0.1/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://100.64.0.1/',
    'http://224.0.0.1/',
    'http://0.0.0.0/',
    'http://255.255.255.255/',
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://[::]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[fc00::1]/',
    'http://[fe80::1]/',
    'http://[ff02::1]/',
    'http://[64:ff9b::a00:1]/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://0177.0.0.1/',
    'http://127.1/',
  ])('%s (a literal address that is not public)', async (url) => {
    const err = await refusal(url);
    expect(err.kind).toBe('refused');
    expect(err.message).toMatch(/address; web_fetch reaches only public addresses/);
    expect(attempts).toEqual([]);
    expect(lookups).toEqual([]);
  });

  it.each([
    ['private.test', '10.0.0.5'],
    ['metadata.test', '169.254.169.254'],
    ['mixed.test', '10.0.0.1'],
    ['mapped.test', '::ffff:127.0.0.1'],
    ['ula.test', 'fd00::1'],
  ])('%s, whose DNS answer holds %s', async (host, bad) => {
    const err = await refusal(`https://${host}/x`);
    expect(err.message).toContain(`resolves to ${bad}`);
    expect(lookups).toEqual([host]);
    expect(attempts).toEqual([]);
  });

  it.each(['file:///etc/passwd', 'ftp://public.test/', 'gopher://public.test/', 'data:text/plain,hi', 'javascript:alert(1)', 'not a url'])(
    '%s (not an http(s) URL)',
    async (url) => {
      expect((await refusal(url)).kind).toBe('refused');
      expect(attempts).toEqual([]);
    },
  );

  it('URLs with credentials, even to an allowed host', async () => {
    expect((await refusal(`http://user:pw@127.0.0.1:${port}/page`)).message).toMatch(/credentials/);
    expect((await refusal(`http://user@public.test/`)).message).toMatch(/credentials/);
    expect(attempts).toEqual([]);
  });

  it('an allowed host on another port: allowPrivate is exact host:port', async () => {
    await refusal(`http://127.0.0.1:${otherPort}/`);
    await refusal(`http://localhost:${port}/`);
    expect(otherHits).toBe(0);
  });
});

describe('the connection is pinned to the checked address', () => {
  it('a public name connects to the address that was checked, by address, and resolves once', async () => {
    let calls = 0;
    // DNS rebinding: the first answer is public, every later one loopback.
    const rebinding: Resolver = async () => [{ address: calls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    const err = await guardedFetch('http://rebind.test/', settings(), new AbortController().signal, { resolve: rebinding, connect }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WebFetchError);
    expect(calls).toBe(1);
    expect(attempts).toEqual(['93.184.216.34']);
  });

  it('an allowed name is fetched through its checked loopback address', async () => {
    const page = await guardedFetch(`http://page.test:${port}/page`, settings(), new AbortController().signal, { resolve, connect });
    expect(page.body.toString()).toBe('hello');
    expect(attempts).toEqual(['127.0.0.1']);
  });
});

describe('every redirect is checked again', () => {
  const to = (target: string) => `http://127.0.0.1:${port}/to?u=${encodeURIComponent(target)}`;

  it.each([
    ['another loopback port', () => `http://127.0.0.1:${otherPort}/`],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a name that resolves privately', () => 'http://private.test/'],
    ['[::1]', () => `http://[::1]:${otherPort}/`],
    ['a file: URL', () => 'file:///etc/passwd'],
    ['a URL with credentials', () => `http://a:b@127.0.0.1:${port}/page`],
  ])('a redirect from an allowed host to %s is refused', async (_name, target) => {
    const err = await refusal(to(target()));
    expect(err.kind).toBe('refused');
    expect(otherHits).toBe(0);
    expect(attempts).toEqual(['127.0.0.1']);
  });

  it('a redirect to another (public) host is not followed: the model gets the URL, the rules judge that host', async () => {
    const err = await refusal(to('http://public.test/elsewhere'));
    expect(err.kind).toBe('redirect');
    expect(err.message).toMatch(/redirected \(HTTP 30\d\) to http:\/\/public\.test\/elsewhere, on another host/);
    // No socket to the public address was opened.
    expect(attempts).toEqual(['127.0.0.1']);
  });

  it('a redirect within the allowed host:port is followed', async () => {
    const page = await guardedFetch(to('/page'), settings(), new AbortController().signal, { resolve, connect });
    expect(page.body.toString()).toBe('hello');
    expect(page.url).toBe(`http://127.0.0.1:${port}/page`);
  });

  it('more than maxRedirects redirects are refused', async () => {
    expect((await refusal(`http://127.0.0.1:${port}/loop`)).message).toMatch(/more than 5 redirects/);
    expect(attempts).toHaveLength(6);
    expect((await refusal(`http://127.0.0.1:${port}/loop`, settings({ maxRedirects: 0 }))).message).toMatch(/more than 0 redirects/);
  });
});

describe('limits', () => {
  it('a body longer than maxBytes is cut at the limit', async () => {
    const page = await guardedFetch(`http://127.0.0.1:${port}/big`, settings({ maxBytes: 300_000 }), new AbortController().signal, { resolve, connect });
    expect(page.truncated).toBe(true);
    expect(page.body.length).toBe(300_000);
  });

  it('a server that never answers times out (the configured timer)', async () => {
    const err = await refusal(`http://127.0.0.1:${port}/never`, settings({ timeoutMs: 200 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/timed out after 200 ms/);
  });

  it('the turn aborting ends the fetch with its reason', async () => {
    const ac = new AbortController();
    const pending = guardedFetch(`http://127.0.0.1:${port}/never`, settings(), ac.signal, { resolve, connect });
    ac.abort(new Error('stopped'));
    await expect(pending).rejects.toThrow('stopped');
  });
});

describe('hostile URLs', () => {
  it('checkUrl throws only refusals and lets only public http(s) through; what a name passes, DNS pointing at loopback refuses', async () => {
    const hostile = [
      '',
      ' ',
      'http://',
      'http:///x',
      'http://%00/',
      'http://exa mple.org/',
      `http://${'a'.repeat(70_000)}.org/`,
      'http://[::1',
      'http://[1:2:3:4:5:6:7:8:9]/',
      'HTTP://LOCALHOST./',
      'http://127.0.0.1.nip.io/',
      'http://①②⑦.0.0.1/',
      'http://0/',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
      'https://__proto__/',
      'http://constructor:80/',
      'ws://public.test/',
    ];
    for (const url of hostile) {
      try {
        const ok = checkUrl(url, { allowPrivate: new Set() });
        expect(['http:', 'https:'], url).toContain(ok.protocol);
        const range = blockedRange(ok.hostname);
        // A literal address that passed is public; a name (`invalid` as an address) is judged by what it resolves to.
        expect(range === undefined || range === 'invalid', url).toBe(true);
        if (range === 'invalid') {
          const toLoopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
          const refused = await checkTarget(url, settings(), toLoopback, new AbortController().signal).then(
            () => undefined,
            (err: unknown) => err,
          );
          expect(refused, url).toBeInstanceOf(WebFetchError);
          expect((refused as WebFetchError).kind, url).toBe('refused');
        }
      } catch (err) {
        expect(err, url).toBeInstanceOf(WebFetchError);
      }
    }
  });
});
