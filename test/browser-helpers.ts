import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { api, isLoopbackHost, testResultsDir, type GatewayProcess } from '@switchboard/testkit';

/** Debian's Chromium, installed by `.ci/run`; Playwright never downloads a browser here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Exactly the launch arguments of issue 17, acceptance 1 (no `--user-data-dir`: `launch()` refuses it). */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

/** Launches Debian's Chromium headless with `CHROMIUM_ARGS`. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS], headless: true });
}

/** Whether a URL the page asked for stays on this machine (`data:`/`blob:` never leave the page). */
export function isLoopbackUrl(raw: string): boolean {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return false;
  }
  if (u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:') return true;
  return isLoopbackHost(u.hostname);
}

/** One browser context under the loopback guard, and what it saw. */
export interface GuardedContext {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Every non-loopback URL the pages asked for (each was aborted); the test fails when not empty. */
  readonly refused: string[];
  /** Every URL requested (HTTP and WebSocket), in order: for "the token is in no URL". */
  readonly urls: string[];
  /** Uncaught page errors (`pageerror`). */
  readonly pageErrors: string[];
  /** Console messages (CSP violations show here). */
  readonly console: string[];
}

/** Options of a new guarded context. */
export interface ContextOptions {
  /** Default: a desktop 1280×800. */
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
}

/** The browser of a test file, and guarded contexts that are checked and closed after each test. */
export interface BrowserEnv {
  readonly browser: Browser;
  /** A new context with the loopback guard, and one page in it. */
  open(opts?: ContextOptions): Promise<GuardedContext>;
}

/** Adds the loopback guard to a context: a non-loopback request is aborted and recorded. */
export async function guardContext(context: BrowserContext): Promise<Omit<GuardedContext, 'page'>> {
  const refused: string[] = [];
  const urls: string[] = [];
  const pageErrors: string[] = [];
  const consoleLines: string[] = [];
  await context.route('**', async (route) => {
    const url = route.request().url();
    if (isLoopbackUrl(url)) return route.continue();
    refused.push(url);
    return route.abort('blockedbyclient');
  });
  context.on('request', (r) => {
    urls.push(r.url());
  });
  context.on('page', (p) => watchPage(p, { refused, urls, pageErrors, console: consoleLines }));
  return { context, refused, urls, pageErrors, console: consoleLines };
}

function watchPage(page: Page, rec: { refused: string[]; urls: string[]; pageErrors: string[]; console: string[] }): void {
  // WebSockets do not pass through `route`: check them here (the resolver rules stop them anyway).
  page.on('websocket', (ws) => {
    rec.urls.push(ws.url());
    if (!isLoopbackUrl(ws.url())) rec.refused.push(ws.url());
  });
  page.on('pageerror', (e) => {
    rec.pageErrors.push(String(e));
  });
  page.on('console', (m) => {
    rec.console.push(`${m.type()}: ${m.text()}`);
  });
}

/**
 * Registers `beforeAll` (launch Chromium), `afterEach` (every context opened in the test: fail on
 * any non-loopback request or uncaught page error, then close) and `afterAll` (close the browser)
 * in the calling file.
 */
export function useBrowser(): BrowserEnv {
  let browser: Browser | undefined;
  let opened: GuardedContext[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterEach(async (ctx) => {
    const now = opened;
    opened = [];
    if (ctx.task.result?.state === 'fail') {
      // What the page showed when the test failed: the first thing to look at.
      const name = `failed-${ctx.task.name.slice(0, 60)}`;
      await Promise.all(now.map((c, i) => shot(c.page, `${name}-${i}`).catch(() => undefined)));
      now.forEach((c, i) => {
        const log = [`url: ${c.page.url()}`, '-- requests', ...c.urls, '-- console', ...c.console, '-- page errors', ...c.pageErrors].join('\n');
        writeFileSync(join(screenshotDir(), `${name.replace(/[^a-z0-9-]+/gi, '-')}-${i}.txt`), `${log}\n`);
      });
    }
    const refused = now.flatMap((c) => c.refused);
    await Promise.all(now.map((c) => c.context.close().catch(() => undefined)));
    expect(refused, 'the page asked for a non-loopback URL (a CDN or a leak)').toEqual([]);
    expect(
      now.flatMap((c) => c.pageErrors),
      'the page threw an uncaught error',
    ).toEqual([]);
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    get browser() {
      if (!browser) throw new Error('the browser is not started yet: use it inside a test or a hook');
      return browser;
    },
    async open(opts: ContextOptions = {}) {
      if (!browser) throw new Error('the browser is not started yet: use it inside a test or a hook');
      const context = await browser.newContext({
        viewport: opts.viewport ?? { width: 1280, height: 800 },
        colorScheme: opts.colorScheme ?? 'light',
        serviceWorkers: 'block',
      });
      const g = await guardContext(context);
      const page = await context.newPage();
      const ctx: GuardedContext = { ...g, page };
      opened.push(ctx);
      return ctx;
    },
  };
}

/** Where screenshots go: `test-results/console/` (git-ignored). */
export function screenshotDir(): string {
  const dir = join(testResultsDir(), 'console');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A full-page screenshot `test-results/console/<name>.png`; returns its path. */
export async function shot(page: Page, name: string): Promise<string> {
  const path = join(screenshotDir(), `${name.replace(/[^a-z0-9-]+/gi, '-')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A `data-testid` locator. */
export const byTestId = (page: Page, id: string) => page.locator(`[data-testid="${id}"]`);

/** Waits for the page root `data-page="<name>"`. */
export async function waitForPage(page: Page, name: string, timeoutMs = 15_000): Promise<void> {
  await page.locator(`[data-page="${name}"]`).first().waitFor({ state: 'visible', timeout: timeoutMs });
}

/** Opens the console and signs in with `token` through the form; resolves once `landing` (a `data-page`) shows. */
export async function signIn(page: Page, gw: GatewayProcess, token: string, landing: string): Promise<void> {
  await page.goto(`${gw.url}/`);
  await byTestId(page, 'signin-token').fill(token);
  await byTestId(page, 'signin-submit').click();
  await waitForPage(page, landing);
}

/** Every value in the page's `localStorage` and `sessionStorage`, as one string. */
export function storageDump(page: Page): Promise<string> {
  return page.evaluate(() => {
    const all: string[] = [];
    for (const s of [window.localStorage, window.sessionStorage]) {
      for (let i = 0; i < s.length; i++) {
        const k = s.key(i) ?? '';
        all.push(k, s.getItem(k) ?? '');
      }
    }
    return all.join('\n');
  });
}

/** Fails when `secret` shows in any URL the context asked for, the page's URL, or its web storage. */
export async function expectSecretNotExposed(g: GuardedContext, secret: string): Promise<void> {
  const enc = encodeURIComponent(secret);
  for (const u of [...g.urls, g.page.url()]) {
    expect(u.includes(secret) || u.includes(enc), `the secret is in a URL: ${u.slice(0, 80)}`).toBe(false);
  }
  expect((await storageDump(g.page)).includes(secret), 'the secret is in web storage').toBe(false);
  // The page's history entries are the page URLs visited; `g.urls` covers every navigation too.
}

/** The operator token's Bearer control-API call. */
export function operator(gw: GatewayProcess, method: string, path: string, body?: unknown) {
  return api(gw, method, `/api/v1${path}`, { token: gw.credentials().operatorToken, ...(body !== undefined ? { body } : {}) });
}

/** A new principal with `role` and a client token for them (through the control API); returns the secret. */
export async function memberWithToken(gw: GatewayProcess, name: string, role = 'member'): Promise<{ principalId: string; secret: string }> {
  const p = await operator(gw, 'POST', '/principals', { name, role });
  expect(p.status, JSON.stringify(p.json)).toBe(201);
  const principalId = p.json.principal.id as string;
  const t = await operator(gw, 'POST', '/tokens', { kind: 'client', name: `${name}-web`, principalId });
  expect(t.status, JSON.stringify(t.json)).toBe(201);
  return { principalId, secret: t.json.secret as string };
}
