import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS, guardContext, isLoopbackUrl, useBrowser } from './browser-helpers.js';

// The browser harness itself (issue 17, acceptance 1): the exact launch arguments, and the route
// guard that aborts and reports any request leaving loopback — what proves the console uses no CDN.
const b = useBrowser();
let server: Server;
let origin: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    res.setHeader('content-type', 'text/html');
    if (req.url === '/throws') {
      res.end('<!doctype html><script>throw new Error("boom from the page")</script>');
      return;
    }
    // A page that asks a CDN for a script and a stylesheet, and an image from a far host.
    res.end(
      '<!doctype html><link rel="stylesheet" href="https://cdn.example.net/x.css">' +
        '<script src="https://cdn.example.net/x.js"></script><img src="http://203.0.113.9/pixel.png"><p id="ok">local</p>',
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

describe('browser harness', () => {
  it('launches Debian Chromium with exactly the issue-17 arguments', () => {
    expect(CHROMIUM_ARGS).toEqual([
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ]);
    expect(b.browser.version()).toMatch(/^\d+\./);
  });

  it('classifies loopback URLs', () => {
    expect(isLoopbackUrl('http://127.0.0.1:1234/x')).toBe(true);
    expect(isLoopbackUrl('ws://127.0.0.1:1234/ws')).toBe(true);
    expect(isLoopbackUrl('data:text/plain,x')).toBe(true);
    expect(isLoopbackUrl('https://cdn.jsdelivr.net/npm/x')).toBe(false);
    expect(isLoopbackUrl('http://203.0.113.9/')).toBe(false);
    expect(isLoopbackUrl('not a url')).toBe(false);
  });

  it('aborts and records every non-loopback request a page makes, serves loopback, and records uncaught errors', async () => {
    // A context of its own (not `b.open`), since `b.open`'s afterEach would fail this test on purpose.
    const context = await b.browser.newContext();
    try {
      const g = await guardContext(context);
      const page = await context.newPage();
      await page.goto(`${origin}/`, { waitUntil: 'load' });
      expect(await page.textContent('#ok')).toBe('local');
      expect([...g.refused].sort()).toEqual(['http://203.0.113.9/pixel.png', 'https://cdn.example.net/x.css', 'https://cdn.example.net/x.js']);
      // An uncaught error is recorded too (useBrowser fails the test on it).
      await page.goto(`${origin}/throws`, { waitUntil: 'load' });
      await expect.poll(() => g.pageErrors.length).toBe(1);
      expect(g.pageErrors[0]).toContain('boom from the page');
    } finally {
      await context.close();
    }
  });
});
