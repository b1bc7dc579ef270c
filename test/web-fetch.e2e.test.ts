import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, isEnd, toolResultFor, useGateway } from './helpers.js';

// Acceptance 1 of issue 15: web_fetch through the real gateway. Only loopback is reached: the
// allowed page server, and a second server that must never be hit. Private, link-local and
// metadata addresses are covered by the unit tests (packages/tools/test/web/ssrf-guard.test.ts).
const ARTICLE = `<!doctype html><html><head><title>Harbour notes</title></head><body>
<nav>Menu · Sign in · Cart</nav>
<article><h1>Ferries in winter</h1>${'<p>The winter timetable runs two ferries an hour between the harbour and the island. </p>'.repeat(6)}
<h2>Fares</h2><ul><li>Adults pay <strong>four euros</strong></li><li>Children ride free</li></ul></article>
<footer>Cookie settings</footer><script>document.title = "pwned"</script></body></html>`;
const BIG = 50 * 1024 * 1024;

let page: Server;
let other: Server;
let pagePort = 0;
let otherPort = 0;
let otherHits = 0;
/** Settles when the 50 MB response's connection closes: with the bytes written so far and whether it finished. */
let bigClosed: Promise<{ written: number; finished: boolean }> = new Promise(() => {});

function streamBig(res: ServerResponse): void {
  let written = 0;
  bigClosed = new Promise((resolve) => res.on('close', () => resolve({ written, finished: res.writableFinished })));
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(BIG) });
  const chunk = Buffer.alloc(256 * 1024, 'z');
  const pump = () => {
    while (!res.destroyed && written < BIG) {
      written += chunk.length;
      const more = res.write(chunk);
      if (written >= BIG) res.end();
      if (!more) return void res.once('drain', pump);
    }
  };
  pump();
}

function listenLoopback(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  page = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/article') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE);
    else if (u.pathname === '/data.json') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ferries":2}');
    else if (u.pathname === '/redirect') res.writeHead(302, { location: u.searchParams.get('to') ?? '/' }).end();
    else if (u.pathname === '/big') streamBig(res);
    else if (u.pathname === '/slow') res.writeHead(200, { 'content-type': 'text/plain' }).write('first bytes, then nothing');
    else res.writeHead(404).end();
  });
  other = createServer((_req, res) => {
    otherHits++;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('internal admin panel');
  });
  pagePort = await listenLoopback(page);
  otherPort = await listenLoopback(other);
});
afterAll(() => {
  page.closeAllConnections();
  page.close();
  other.close();
});

const env = useGateway({
  client: true,
  config: () => ({
    tools: { webFetch: { allowPrivate: [`127.0.0.1:${pagePort}`, `localhost:${pagePort}`], timeout: '2s' } },
    permissions: { allow: ['web_fetch(domain:127.0.0.1)'] },
    channels: { websocket: { accounts: { default: { rateLimit: { burst: 1000, perMinute: 6000 } } } } },
  }),
});

/** One turn whose model calls web_fetch on `url`; returns the tool_result the model got. */
async function fetchTurn(id: string, url: string) {
  const { fake, ws } = env;
  fake.enqueue({ toolUses: [{ name: 'web_fetch', input: { url }, id: `toolu_${id}` }] }, { text: `fetched ${id}` });
  ws.send({ type: 'message', clientId: id, text: `fetch ${url}` });
  const end = await ws.next((f) => f.clientId === id && (isEnd(f) || f.type === 'approval_request'), 20_000);
  expect(end, JSON.stringify(end)).toMatchObject({ type: 'final', text: `fetched ${id}` });
  return toolResultFor(fake, `toolu_${id}`);
}

describe('web_fetch end to end (acceptance 1)', () => {
  it('is offered (web_search is not: no provider is configured)', async () => {
    await fetchTurn('offer', `http://127.0.0.1:${pagePort}/data.json`);
    const tools = ((env.fake.requests.at(-1)?.body ?? {}) as { tools?: Array<{ name: string }> }).tools?.map((t) => t.name) ?? [];
    expect(tools).toContain('web_fetch');
    expect(tools).not.toContain('web_search');
  });

  it('returns the Markdown of the article of an allowed loopback page, fenced as untrusted', async () => {
    const result = await fetchTurn('article', `http://127.0.0.1:${pagePort}/article`);
    expect(result.is_error).toBeFalsy();
    const text = result.content ?? '';
    expect(text).toContain('<<<EXTERNAL_UNTRUSTED_CONTENT source="web_fetch"');
    expect(text).toContain('The winter timetable runs two ferries an hour');
    expect(text).toMatch(/## Fares/);
    expect(text).toContain('**four euros**');
    for (const junk of ['Sign in', 'Cookie settings', 'pwned']) expect(text).not.toContain(junk);
  });

  it.each([
    ['another loopback port', () => `http://127.0.0.1:${otherPort}/`],
    ['[::1]', () => `http://[::1]:${otherPort}/`],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${otherPort}/`],
    ['the decimal IP 2130706433', () => `http://2130706433:${otherPort}/`],
    ['localhost on another port', () => `http://localhost:${otherPort}/`],
    [
      'a redirect from the allowed host to another loopback port',
      () => `http://127.0.0.1:${pagePort}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${otherPort}/`)}`,
    ],
    ['a URL with credentials', () => `http://user:pw@127.0.0.1:${pagePort}/article`],
  ])('refuses %s', async (name, url) => {
    const result = await fetchTurn(`refuse-${name.replace(/\W+/gu, '-')}`, url());
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/refused|credentials/);
    expect(result.content).not.toContain('internal admin panel');
    expect(otherHits).toBe(0);
  });

  it('cuts a 50 MB body at tools.webFetch.maxBytes and closes the connection', async () => {
    const result = await fetchTurn('big', `http://127.0.0.1:${pagePort}/big`);
    expect(result.content).toContain('[the body was cut at 5242880 bytes (tools.webFetch.maxBytes)]');
    const closed = await bigClosed;
    expect(closed.finished).toBe(false);
    expect(closed.written).toBeLessThan(BIG);
  });

  it('times a slow server out after tools.webFetch.timeout', async () => {
    const result = await fetchTurn('slow', `http://127.0.0.1:${pagePort}/slow`);
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/timed out after 2000 ms \(tools\.webFetch\.timeout\)/);
  });
});

describe('web_fetch permissions', () => {
  it('the first fetch of a domain asks (source mode); "always allow" saves web_fetch(domain:<host>) and the next fetch runs', async () => {
    const { fake, ws, gw } = env;
    fake.enqueue({ toolUses: [{ name: 'web_fetch', input: { url: `http://localhost:${pagePort}/data.json` }, id: 'toolu_ask1' }] }, { text: 'asked' });
    ws.send({ type: 'message', clientId: 'ask1', text: 'fetch' });
    const ask = await ws.next((f) => f.clientId === 'ask1' && (isEnd(f) || f.type === 'approval_request'));
    expect(ask).toMatchObject({ type: 'approval_request', tool: 'web_fetch', source: 'mode' });
    ws.send({ type: 'approve', approvalId: ask.approvalId, decision: 'allow', always: true });
    expect(await ws.next((f) => f.clientId === 'ask1' && isEnd(f))).toMatchObject({ type: 'final', text: 'asked' });
    expect(toolResultFor(fake, 'toolu_ask1').content).toContain('{"ferries":2}');

    const res = await fetch(`${gw.url}/api/v1/rules`, { headers: bearer(gw.credentials().operatorToken) });
    const rules = ((await res.json()) as { rules: Array<{ rule: string }> }).rules.map((r) => r.rule);
    expect(rules).toContain('web_fetch(domain:localhost)');

    const again = await fetchTurn('ask2', `http://localhost:${pagePort}/article`);
    expect(again.content).toContain('Ferries in winter');
  });
});
