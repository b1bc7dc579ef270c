import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, startGateway, type GatewayProcess } from '@switchboard/testkit';
import { useFakeModel } from './helpers.js';

// The console's static files (issue 17): served under console.basePath with a strict CSP and
// framing headers on console routes only; the single-page fallback answers only GETs that accept
// text/html under basePath outside the reserved prefixes, so a mistyped webhook URL keeps its 404.

const env = useFakeModel();
const INDEX =
  '<!doctype html><html><head><script type="module" crossorigin src="/assets/app.js"></script><link rel="stylesheet" href="/assets/app.css"></head><body data-test="console-index"></body></html>';

/** A built console: index.html and one asset. */
function builtConsole(): string {
  const dir = mkdtempSync(join(tmpdir(), 'swb-console-dist-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'app.js'), 'console.log("app");\n');
  writeFileSync(join(dir, 'assets', 'app.css'), 'body { margin: 0; }\n');
  return dir;
}

const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

function expectConsoleHeaders(h: Headers, what: string) {
  expect(h.get('content-security-policy'), what).toBe(CSP);
  expect(h.get('x-frame-options'), what).toBe('DENY');
  expect(h.get('x-content-type-options'), what).toBe('nosniff');
  expect(h.get('referrer-policy'), what).toBe('no-referrer');
}

describe('console at /', () => {
  let gw: GatewayProcess;
  beforeAll(async () => {
    gw = await startGateway({ modelUrl: env.fake.url, config: { console: { root: builtConsole() } } });
  });

  it('serves index.html at / and for deep links, and the assets, with the CSP and framing headers', async () => {
    for (const path of ['/', '/index.html', '/approvals', '/sessions/abc-123', '/chat']) {
      const res = await api(gw, 'GET', path, { headers: html });
      expect(res.status, path).toBe(200);
      expect(res.text, path).toBe(INDEX);
      expectConsoleHeaders(res.headers, path);
    }
    const asset = await api(gw, 'GET', '/assets/app.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expectConsoleHeaders(asset.headers, 'asset');
  });

  it('keeps 404 for reserved prefixes, for non-HTML GETs and for other methods', async () => {
    for (const path of [
      '/channels/telegram/typo',
      '/channels/slack/default/event',
      '/api/v1/nope',
      '/v1/chat/completion',
      '/ws/nope',
      '/docs/nope/deeper',
      '/files/0000',
      '/healthz/x',
      '/readyz/x',
      '/metrics/x',
      '/API/v1/upper',
    ]) {
      const res = await api(gw, 'GET', path, { headers: html });
      // The control API and /files authenticate before routing: their unknown paths are 401 without a token.
      expect(res.status, path).toBe(/^\/(api|files)\//.test(path) ? 401 : 404);
      expect(res.headers.get('content-security-policy'), path).toBeNull();
      expect(res.text, path).not.toContain('console-index');
    }
    const json = await api(gw, 'GET', '/approvals', { headers: { accept: 'application/json' } });
    expect(json.status).toBe(404);
    const missingAsset = await api(gw, 'GET', '/assets/missing.js', { headers: { accept: '*/*' } });
    expect(missingAsset.status).toBe(404);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await api(gw, method, '/approvals', { headers: html, body: {} });
      expect(res.status, method).toBe(404);
    }
    const webhook = await api(gw, 'POST', '/channels/telegram/typo', { body: { update_id: 1 } });
    expect(webhook.status).toBe(404);
  });

  it('puts the console headers on console routes only: Swagger UI, the API and /healthz keep theirs', async () => {
    const docs = await api(gw, 'GET', '/docs/', { headers: html });
    expect(docs.status).toBe(200);
    expect(docs.text).toMatch(/swagger/i);
    expect(docs.headers.get('content-security-policy')).not.toBe(CSP);
    expect(docs.headers.get('x-frame-options')).toBeNull();
    for (const path of ['/api/v1/openapi.json', '/healthz', '/api/v1/auth/session']) {
      const res = await api(gw, 'GET', path, { headers: html });
      expect(res.headers.get('content-security-policy'), path).toBeNull();
    }
  });
});

describe('console under a basePath, not built, disabled', () => {
  it('serves only under basePath and redirects the bare path', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { console: { root: builtConsole(), basePath: 'console' } } });
    const page = await api(gw, 'GET', '/console/people', { headers: html });
    expect(page.status).toBe(200);
    expect(page.text).toContain('console-index');
    // The build's absolute asset URLs move under the base path (no <base>: the CSP forbids it).
    expect(page.text).toContain('src="/console/assets/app.js"');
    expect(page.text).toContain('href="/console/assets/app.css"');
    expect(page.text).not.toContain('="/assets/');
    const root = await api(gw, 'GET', '/console/', { headers: html });
    expect(root.status).toBe(200);
    expect(root.text).toBe(page.text);
    expect((await api(gw, 'GET', '/console/assets/app.css')).status).toBe(200);
    expect((await api(gw, 'GET', '/console/assets/app.js')).status).toBe(200);
    const bare = await fetch(`${gw.url}/console`, { headers: html, redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/console/');
    expect((await api(gw, 'GET', '/people', { headers: html })).status).toBe(404);
    expect((await api(gw, 'GET', '/', { headers: html })).status).toBe(404);
  });

  it('without a build: logs it once, answers 503 text at basePath, and keeps working', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'swb-console-empty-'));
    const gw = await startGateway({ modelUrl: env.fake.url, config: { console: { root: empty } } });
    const res = await api(gw, 'GET', '/', { headers: html });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/not built/);
    expect((await api(gw, 'GET', '/overview', { headers: html })).status).toBe(503);
    expect((await api(gw, 'GET', '/channels/telegram/typo', { headers: html })).status).toBe(404);
    expect((await api(gw, 'GET', '/healthz')).status).toBe(200);
    expect(gw.logs().filter((l) => l.includes('console_not_built'))).toHaveLength(1);
  });

  it('console.enabled false: no pages and no sign-in', async () => {
    const gw = await startGateway({ modelUrl: env.fake.url, config: { console: { enabled: false, root: builtConsole() } } });
    expect((await api(gw, 'GET', '/', { headers: html })).status).toBe(404);
    const signIn = await api(gw, 'POST', '/api/v1/auth/session', { body: { token: gw.credentials().operatorToken } });
    expect(signIn.status).toBe(404);
    expect(signIn.json).toMatchObject({ code: 'console_disabled' });
    expect(gw.logs().some((l) => l.includes('console_not_built'))).toBe(false);
  });
});
