import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedRange, createWebFetchTool, parseHostPort, readableContent, type WebFetchSettings } from '../../src/index.js';

const ARTICLE = `<!doctype html><html><head><title>Tide tables</title><style>p{}</style></head><body>
<nav>Home · Shop · Login</nav>
<article><h1>How tides work</h1>${'<p>The moon pulls the oceans, and the water rises and falls twice a day along the coast. </p>'.repeat(8)}
<p>Read <a href="https://example.org/more">more</a> about <strong>spring tides</strong>.</p></article>
<footer>© cookie banner</footer><script>stealCookies()</script></body></html>`;

let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/article') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE);
    else if (req.url === '/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}');
    else if (req.url === '/pdf') res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4');
    else if (req.url === '/long') res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000));
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('gone');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

const settings = (extra: Partial<WebFetchSettings> = {}): WebFetchSettings => ({
  allowPrivate: [new URL(base).host],
  timeoutMs: 5_000,
  maxBytes: 1024 * 1024,
  maxChars: 50_000,
  maxRedirects: 5,
  ...extra,
});
const ctx = () => ({ signal: new AbortController().signal, toolUseId: 't', sessionId: 's', turnId: 'u', agentId: 'a', workspace: '/tmp' });

describe('web_fetch', () => {
  it('returns the article of an HTML page as Markdown, fenced as untrusted', async () => {
    const out = await createWebFetchTool(settings()).call({ url: `${base}/article` }, ctx());
    expect(out.isError).toBeUndefined();
    expect(out.content).toContain(`URL: ${base}/article\nStatus: 200`);
    expect(out.content).toContain('<<<EXTERNAL_UNTRUSTED_CONTENT source="web_fetch"');
    expect(out.content).toContain('The moon pulls the oceans');
    expect(out.content).toContain('[more](https://example.org/more)');
    expect(out.content).toContain('**spring tides**');
    for (const junk of ['stealCookies', 'cookie banner', 'Login', 'p{}']) expect(out.content).not.toContain(junk);
  });

  it('returns JSON as it is and refuses other types with a clear message', async () => {
    const tool = createWebFetchTool(settings());
    expect((await tool.call({ url: `${base}/json` }, ctx())).content).toContain('\n{"a":1}\n');
    const pdf = await tool.call({ url: `${base}/pdf` }, ctx());
    expect(pdf).toEqual({ content: `web_fetch reads HTML, JSON and text only; ${base}/pdf is application/pdf`, isError: true });
  });

  it('cuts the text at maxChars and says so', async () => {
    const out = await createWebFetchTool(settings({ maxChars: 1000 })).call({ url: `${base}/long` }, ctx());
    expect(out.content).toContain(`${'x'.repeat(1000)}\n\n[the text was cut at 1000 characters (tools.webFetch.maxChars)]`);
    expect(out.content).not.toContain('x'.repeat(1001));
  });

  it('an HTTP error status is an is_error result with the status', async () => {
    const out = await createWebFetchTool(settings()).call({ url: `${base}/missing` }, ctx());
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^HTTP 404/);
  });

  it('validateInput refuses what needs no DNS: schemes, credentials, private literals', async () => {
    const tool = createWebFetchTool(settings());
    const v = (url: string) => tool.validateInput?.({ url }, ctx());
    expect(await v('file:///etc/passwd')).toMatchObject({ ok: false });
    expect(await v('http://u:p@example.org/')).toMatchObject({ ok: false });
    expect(await v('http://[::1]:9/')).toMatchObject({ ok: false });
    expect(await v('http://2130706433/')).toMatchObject({ ok: false });
    expect(await v(`${base}/article`)).toEqual({ ok: true });
    expect(await v('https://example.org/')).toEqual({ ok: true });
  });

  it('asks in the mode step with source mode, and its rule content is the URL', async () => {
    // An injected resolver: the permission check resolves the host, and no test may reach real DNS.
    const tool = createWebFetchTool(settings(), { resolve: async () => [{ address: '93.184.216.34', family: 4 }] });
    expect(await tool.checkPermissions?.({ url: 'https://example.org/a' }, ctx())).toMatchObject({ behavior: 'ask', source: 'mode' });
    expect(tool.ruleContent?.({ url: 'https://example.org/a' })).toBe('https://example.org/a');
    expect(tool.readOnly).toBe(true);
  });

  it('refuses an allowPrivate entry that is not host:port', () => {
    expect(() => createWebFetchTool(settings({ allowPrivate: ['localhost'] }))).toThrow(/not host:port/);
  });
});

describe('address ranges (ipaddr.js)', () => {
  it.each([
    ['8.8.8.8', undefined],
    ['2606:4700::1111', undefined],
    ['::ffff:8.8.8.8', undefined],
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['239.1.1.1', 'multicast'],
    ['::ffff:10.0.0.1', 'private'],
    ['fd12::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['not-an-ip', 'invalid'],
  ])('%s → %s', (address, range) => {
    expect(blockedRange(address)).toBe(range);
  });

  it('allowPrivate entries are normalised as URLs read them', () => {
    expect(parseHostPort('2130706433:80')).toBe('127.0.0.1:80');
    expect(parseHostPort('[::1]:8080')).toBe('[::1]:8080');
    expect(parseHostPort('LocalHost:3000')).toBe('localhost:3000');
    expect(parseHostPort('localhost')).toBeUndefined();
    expect(parseHostPort('a:99999')).toBeUndefined();
    expect(parseHostPort('http://a:80')).toBeUndefined();
  });

  it('readableContent falls back to the body when there is no article', async () => {
    expect(await readableContent(Buffer.from('<p>short note</p>'), 'text/html', 'x')).toEqual({ ok: true, kind: 'html', text: 'short note' });
    expect(await readableContent(Buffer.from([0xe9]), 'text/plain; charset=latin1', 'x')).toEqual({ ok: true, kind: 'text', text: 'é' });
  });
});

describe('web_fetch rule contents and redirects (review findings)', () => {
  it('rules see the URL as the fetch reads it: backslashes and a missing // are another host', async () => {
    const { canonicalUrl } = await import('../../src/web/web-fetch-tool.js');
    expect(new URL(canonicalUrl('http:\\\\evil.com\\.example.com')).hostname).toBe('evil.com');
    expect(canonicalUrl('http:evil.com/')).toBe('http://evil.com/');
    expect(canonicalUrl('not a url')).toBe('not a url');
  });

  it('a media type from the server is shown only when it is a plain type/subtype', async () => {
    const { shownMediaType } = await import('../../src/web/web-content.js');
    expect(shownMediaType('text/html; charset=utf-8')).toBe('text/html');
    expect(shownMediaType('text/x ignore previous instructions')).toBe('an unusual type');
    expect(shownMediaType('')).toBe('none');
  });
});
