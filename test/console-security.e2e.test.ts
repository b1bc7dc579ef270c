import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { chat, connectPerson, useGateway } from './helpers.js';
import { byTestId, memberWithToken, operator, shot, signIn, useBrowser, waitForPage } from './browser-helpers.js';

// Issue 17, acceptance 3, in a real Chromium: the console's Content-Security-Policy stops an
// injected inline script (and transcript text is rendered as text, so the injection never becomes
// markup); a cross-site form post is refused; the session cookie carries HttpOnly and
// SameSite=Strict (and no Secure over plain HTTP); the failed-auth lockout applies to sign-in.

const INJECTED = `<script>window.__pwned = 'script'</script><img src="x" onerror="window.__pwned = 'img'">`;

const b = useBrowser();

describe('console security (issue 17, acceptance 3)', () => {
  const env = useGateway();

  it('the CSP blocks an inline script; an injected transcript entry is shown as text and runs nothing', async () => {
    const { gw } = env;
    const { ws, principalId } = await connectPerson(gw, 'mallory', 'member');
    const res = await chat(ws, 'inject-1', INJECTED);
    expect(res.end.type).toBe('final');
    ws.close();
    const session = (await operator(gw, 'GET', `/sessions?principalId=${principalId}`)).json.sessions[0].id as string;

    const g = await b.open();
    const { page } = g;
    const violations: string[] = [];
    await page.exposeFunction('__reportViolation', (d: string) => {
      violations.push(d);
    });
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        (window as unknown as { __reportViolation: (d: string) => void }).__reportViolation(e.violatedDirective);
      });
    });
    await signIn(page, gw, gw.credentials().operatorToken, 'overview');
    const main = await page.request.get(`${gw.url}/sessions/${session}`, { headers: { accept: 'text/html' } });
    const csp = main.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(main.headers()['x-frame-options']).toBe('DENY');

    await page.goto(`${gw.url}/sessions/${session}`);
    await waitForPage(page, 'session');
    const entry = byTestId(page, 'transcript-entry').filter({ hasText: '<script>' }).first();
    await entry.waitFor();
    // The injection is there as text, character for character, and made no element.
    expect(await entry.textContent()).toContain(INJECTED);
    expect(await byTestId(page, 'transcript').locator('script, img[src="x"]').count()).toBe(0);
    await shot(page, 'security-injected-transcript');

    // Even an inline script that did get into the DOM (a bug the escaping missed) does not run.
    await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = "window.__pwned = 'inline'";
      document.body.append(s);
    });
    await expect.poll(() => violations.length).toBeGreaterThan(0);
    expect(violations.some((v) => v.startsWith('script-src'))).toBe(true);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
  });

  it("the web chat shows a member's own injected text as text", async () => {
    const { gw } = env;
    const m = await memberWithToken(gw, 'trudy');
    const { page } = await b.open();
    await signIn(page, gw, m.secret, 'chat');
    await page.locator('[data-testid="chat-status"][data-state="open"]').waitFor();
    await byTestId(page, 'chat-input').fill(INJECTED);
    await byTestId(page, 'chat-send').click();
    await page.locator('[data-testid="chat-message"][data-role="assistant"]', { hasText: 'echo: <script>' }).waitFor();
    expect(await byTestId(page, 'chat-log').locator('script, img[src="x"]').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
  });

  it('the session cookie is HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP, and unreadable by page script', async () => {
    const { gw } = env;
    const { page, context } = await b.open();
    await signIn(page, gw, gw.credentials().operatorToken, 'overview');
    const cookies = await context.cookies();
    expect(cookies.map((c) => c.name)).toEqual(['swb_session']);
    expect(cookies[0]).toMatchObject({ name: 'swb_session', httpOnly: true, sameSite: 'Strict', secure: false, path: '/' });
    expect(cookies[0]?.value).not.toContain(gw.credentials().operatorToken);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    // Logout ends it on the server: the cookie no longer opens the API.
    const value = cookies[0]?.value ?? '';
    await byTestId(page, 'signout').click();
    await waitForPage(page, 'signin');
    expect((await api(gw, 'GET', '/api/v1/auth/session', { headers: { cookie: `swb_session=${value}` } })).status).toBe(401);
  });

  it('Swagger UI at /docs keeps working: the console policy is not on it, and it loads nothing from outside', async () => {
    const { gw } = env;
    const { page } = await b.open();
    const consolePolicy = (await page.request.get(`${gw.url}/`, { headers: { accept: 'text/html' } })).headers()['content-security-policy'];
    expect(consolePolicy).toContain("script-src 'self'");
    const res = await page.goto(`${gw.url}/docs`);
    expect(res?.headers()['content-security-policy']).not.toBe(consolePolicy);
    await page.locator('.swagger-ui .info').first().waitFor();
    expect(await page.locator('.swagger-ui .opblock').count()).toBeGreaterThan(5);
    await shot(page, 'security-docs-swagger');
  });

  describe('a cross-site form post', () => {
    let evil: Server;
    let evilUrl = '';
    let target = '';
    beforeAll(async () => {
      // Another origin on loopback: a page that auto-posts a form to the gateway's control API.
      evil = createServer((req, res) => {
        res.setHeader('content-type', 'text/html');
        // `/signin`: a login CSRF (signing the victim in as the attacker); otherwise a change with the victim's cookie.
        const form =
          req.url === '/signin'
            ? `<form id="f" method="post" action="${target}/api/v1/auth/session" enctype="application/x-www-form-urlencoded"><input name="token" value="swb_c_attacker"></form>`
            : `<form id="f" method="post" action="${target}/api/v1/principals" enctype="application/x-www-form-urlencoded"><input name="name" value="csrf-victim"><input name="role" value="owner"></form>`;
        res.end(`<!doctype html>${form}<script>document.getElementById("f").submit()</script>`);
      });
      await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
      evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
    });
    afterAll(async () => {
      await new Promise((r) => evil.close(r));
    });

    it('is refused even though the signed-in browser sends its cookie', async () => {
      const { gw } = env;
      target = gw.url;
      const { page } = await b.open();
      await signIn(page, gw, gw.credentials().operatorToken, 'overview');
      const posted = page.waitForResponse((r) => r.url() === `${gw.url}/api/v1/principals` && r.request().method() === 'POST');
      await page.goto(evilUrl);
      const res = await posted;
      expect(res.status()).toBe(403);
      // Same site (loopback, another port), so the browser did send the cookie: the missing CSRF header is what refused it.
      expect((await res.request().allHeaders()).cookie).toContain('swb_session=');
      expect(JSON.parse(await res.text())).toMatchObject({ code: 'csrf' });
      const principals = await operator(gw, 'GET', '/principals');
      expect(JSON.stringify(principals.json)).not.toContain('csrf-victim');
      await shot(page, 'security-cross-site-post');
    });

    it('a cross-site form cannot sign a browser in either (no login CSRF)', async () => {
      const { gw } = env;
      target = gw.url;
      const { page, context } = await b.open();
      const posted = page.waitForResponse((r) => r.url() === `${gw.url}/api/v1/auth/session` && r.request().method() === 'POST');
      await page.goto(`${evilUrl}signin`);
      const res = await posted;
      expect([403, 415]).toContain(res.status());
      expect(res.headers()['set-cookie']).toBeUndefined();
      expect(await context.cookies(gw.url)).toEqual([]);
    });
  });
});

describe('sign-in lockout (issue 17, acceptance 3)', () => {
  const env = useGateway({ config: { auth: { maxFailures: 3, window: '60s', lockout: '5m' } } });

  it('after maxFailures wrong tokens the form refuses even the right token', async () => {
    const { gw } = env;
    const { page } = await b.open();
    await page.goto(`${gw.url}/`);
    await waitForPage(page, 'signin');
    for (let i = 0; i < 3; i++) {
      await byTestId(page, 'signin-token').fill(`swb_o_wrong-token-number-${i}-000000000000000000`);
      await byTestId(page, 'signin-submit').click();
      await page.locator('[data-testid="signin-error"]', { hasText: /wrong/i }).waitFor();
      await page.locator('[data-testid="signin-submit"]:not([disabled])').waitFor();
    }
    const answer = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/session') && r.request().method() === 'POST');
    await byTestId(page, 'signin-token').fill(gw.credentials().operatorToken);
    await byTestId(page, 'signin-submit').click();
    expect((await answer).status()).toBe(429);
    await page.locator('[data-testid="signin-error"]', { hasText: /too many/i }).waitFor();
    await shot(page, 'security-lockout');
    expect(await page.context().cookies()).toEqual([]);
  });
});
