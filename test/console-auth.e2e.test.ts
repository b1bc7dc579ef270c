import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { chat, connectPerson, useGateway } from './helpers.js';
import { httpFrom, signIn, withCookie } from './console-helpers.js';
import { fcParams, hostileJson } from './fuzz-helpers.js';

// Console sign-in (issue 17): a token is posted once for an HttpOnly, SameSite=Strict cookie bound
// to the token; cookie auth on the control API needs the CSRF header for every change; a member's
// cookie reaches only /api/v1/me; revoking the token ends the session. Each attack is a test.

const env = useGateway();

const mint = async (body: Record<string, unknown>) => {
  const res = await api(env.gw, 'POST', '/api/v1/tokens', { token: env.gw.credentials().operatorToken, body });
  expect(res.status).toBe(201);
  return res.json as { secret: string; token: { id: string } };
};

describe('console sign-in', () => {
  it('an operator token signs in once: the cookie is HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP, and is not the token', async () => {
    const op = env.gw.credentials().operatorToken;
    const s = await signIn(env.gw, op);
    expect(s.res.json).toMatchObject({ kind: 'operator', name: expect.any(String), scopes: expect.arrayContaining(['admin']), webChat: true });
    expect(typeof s.csrf).toBe('string');
    expect(Date.parse(s.res.json.expiresAt as string)).toBeGreaterThan(Date.now());
    expect(s.setCookie).toMatch(/^swb_session=[A-Za-z0-9_-]{40,}; /);
    const flags = s.setCookie.split(';').map((f) => f.trim().toLowerCase());
    expect(flags).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']));
    expect(flags).not.toContain('secure');
    expect(s.setCookie).not.toContain(op);
    expect(s.res.text).not.toContain(op);
    expect(s.res.headers.get('cache-control')).toBe('no-store');

    const who = await withCookie(env.gw, 'GET', '/api/v1/auth/session', s);
    expect(who.status).toBe(200);
    expect(who.json).toMatchObject({ kind: 'operator', csrfToken: s.csrf });
    expect((await api(env.gw, 'GET', '/api/v1/auth/session')).status).toBe(401);
  });

  it('a wrong token is a 401 without a cookie; a token in the URL is never accepted', async () => {
    const op = env.gw.credentials().operatorToken;
    const wrong = await api(env.gw, 'POST', '/api/v1/auth/session', { body: { token: 'swb_o_definitely-not-a-real-token-000000' } });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ code: 'unauthorized' });
    expect(wrong.headers.get('set-cookie')).toBeNull();
    for (const path of [`/api/v1/auth/session?token=${op}`, `/api/v1/principals?token=${op}`, `/api/v1/principals?access_token=${op}`]) {
      const res = await api(env.gw, 'GET', path);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('set-cookie'), path).toBeNull();
    }
    const posted = await api(env.gw, 'POST', `/api/v1/auth/session?token=${op}`, { body: {} });
    expect(posted.status).toBe(400);
    expect(posted.headers.get('set-cookie')).toBeNull();
  });

  it('the cookie authenticates the control API with the token scopes; changes need X-CSRF-Token', async () => {
    const s = await signIn(env.gw, env.gw.credentials().operatorToken);
    const list = await withCookie(env.gw, 'GET', '/api/v1/principals', { cookie: s.cookie });
    expect(list.status).toBe(200);
    // No header: refused before the body is read.
    const noHeader = await withCookie(env.gw, 'POST', '/api/v1/principals', { cookie: s.cookie }, { body: { name: 'csrf-victim', role: 'member' } });
    expect(noHeader.status).toBe(403);
    expect(noHeader.json).toMatchObject({ code: 'csrf' });
    const wrongHeader = await withCookie(
      env.gw,
      'POST',
      '/api/v1/principals',
      { cookie: s.cookie, csrf: 'x'.repeat(43) },
      { body: { name: 'csrf-victim', role: 'member' } },
    );
    expect(wrongHeader.status).toBe(403);
    // A cross-site HTML form: urlencoded, the cookie at most, never the header.
    const form = await withCookie(
      env.gw,
      'POST',
      '/api/v1/principals',
      { cookie: s.cookie },
      { body: 'name=csrf-victim&role=owner', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' } },
    );
    expect(form.status).toBe(403);
    expect(form.json).toMatchObject({ code: 'csrf' });
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const res = await withCookie(
        env.gw,
        method,
        '/api/v1/principals/00000000-0000-4000-8000-000000000000',
        { cookie: s.cookie },
        method === 'DELETE' ? {} : { body: {} },
      );
      expect(res.status, method).toBe(403);
    }
    const people = await api(env.gw, 'GET', '/api/v1/principals', { token: env.gw.credentials().operatorToken });
    expect(JSON.stringify(people.json)).not.toContain('csrf-victim');
    // With the header it works.
    const made = await withCookie(env.gw, 'POST', '/api/v1/principals', s, { body: { name: 'cookie-made', role: 'member' } });
    expect(made.status).toBe(201);
    const audit = await api(env.gw, 'GET', '/api/v1/audit?action=principal.create', { token: env.gw.credentials().operatorToken });
    expect(JSON.stringify(audit.json)).toContain('operator:');
  });

  it('a form post to the sign-in route is refused (JSON only), and so is a browser sign-in from another site', async () => {
    const op = env.gw.credentials().operatorToken;
    const form = await api(env.gw, 'POST', '/api/v1/auth/session', {
      body: `token=${op}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.headers.get('set-cookie')).toBeNull();
    const cross = await api(env.gw, 'POST', '/api/v1/auth/session', { body: { token: op }, headers: { 'sec-fetch-site': 'cross-site' } });
    expect(cross.status).toBe(403);
    expect(cross.headers.get('set-cookie')).toBeNull();
  });

  it('scopes come from the token: a read-only operator session cannot create, and Bearer wins over a cookie', async () => {
    const ro = await mint({ kind: 'operator', name: 'console-reader', scopes: ['read'] });
    const s = await signIn(env.gw, ro.secret);
    expect(s.res.json.scopes).toEqual(['read']);
    expect((await withCookie(env.gw, 'GET', '/api/v1/sessions', s)).status).toBe(200);
    const made = await withCookie(env.gw, 'POST', '/api/v1/principals', s, { body: { name: 'reader-made', role: 'member' } });
    expect(made.status).toBe(403);
    expect(made.json).toMatchObject({ code: 'forbidden' });
    const bad = await api(env.gw, 'GET', '/api/v1/sessions', { token: 'swb_o_wrong-bearer-token-with-a-cookie-00', headers: { cookie: s.cookie } });
    expect(bad.status).toBe(401);
  });

  it('/readyz shows its details to an operator console session with read, not to a member or a stranger', async () => {
    const reader = await mint({ kind: 'operator', name: 'console-readyz', scopes: ['read'] });
    const s = await signIn(env.gw, reader.secret);
    const detailed = await withCookie(env.gw, 'GET', '/readyz', { cookie: s.cookie });
    expect(detailed.json.channels).toHaveProperty(['websocket:default']);
    const p = await api(env.gw, 'POST', '/api/v1/principals', { token: env.gw.credentials().operatorToken, body: { name: 'readyz-member', role: 'member' } });
    const m = await signIn(env.gw, (await mint({ kind: 'client', principalId: p.json.principal.id })).secret);
    for (const headers of [{ cookie: m.cookie }, { cookie: 'swb_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }, {}]) {
      const res = await api(env.gw, 'GET', '/readyz', { headers });
      expect(res.json.channels, JSON.stringify(headers)).toBeUndefined();
      expect(res.json).toHaveProperty('ready');
    }
  });

  it('revoking the token ends the console session; logout needs the CSRF header and ends it', async () => {
    const t = await mint({ kind: 'operator', name: 'console-revoked', scopes: ['read'] });
    const s = await signIn(env.gw, t.secret);
    expect((await withCookie(env.gw, 'GET', '/api/v1/sessions', s)).status).toBe(200);
    const revoke = await api(env.gw, 'DELETE', `/api/v1/tokens/${t.token.id}`, { token: env.gw.credentials().operatorToken });
    expect(revoke.status).toBe(200);
    expect((await withCookie(env.gw, 'GET', '/api/v1/sessions', s)).status).toBe(401);
    expect((await withCookie(env.gw, 'GET', '/api/v1/auth/session', s)).status).toBe(401);

    const again = await signIn(env.gw, env.gw.credentials().operatorToken);
    const noHeader = await withCookie(env.gw, 'DELETE', '/api/v1/auth/session', { cookie: again.cookie });
    expect(noHeader.status).toBe(403);
    const out = await withCookie(env.gw, 'DELETE', '/api/v1/auth/session', again);
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^swb_session=; Max-Age=0;/);
    expect((await withCookie(env.gw, 'GET', '/api/v1/principals', again)).status).toBe(401);
  });

  it("a member's cookie gets 403 on operator routes and reads only their own sessions (/api/v1/me)", async () => {
    const alicePrincipal = await api(env.gw, 'POST', '/api/v1/principals', {
      token: env.gw.credentials().operatorToken,
      body: { name: 'alice-console', role: 'member' },
    });
    const alice = await mint({ kind: 'client', principalId: alicePrincipal.json.principal.id });
    const bobPerson = await connectPerson(env.gw, 'bob-console', 'member');
    await chat(bobPerson.ws, 'b1', 'hello from bob');
    bobPerson.ws.close();
    const bobSessions = await api(env.gw, 'GET', `/api/v1/sessions?principalId=${bobPerson.principalId}`, { token: env.gw.credentials().operatorToken });
    const bobSession = bobSessions.json.sessions[0].id as string;

    const s = await signIn(env.gw, alice.secret);
    expect(s.res.json).toMatchObject({ kind: 'client', name: 'alice-console', role: 'member', principalId: expect.any(String) });
    expect(s.res.json.scopes).toBeUndefined();
    for (const [method, path] of [
      ['GET', '/api/v1/principals'],
      ['GET', '/api/v1/sessions'],
      ['GET', '/api/v1/approvals'],
      ['GET', `/api/v1/sessions/${bobSession}/transcript`],
      ['POST', '/api/v1/tokens'],
    ] as const) {
      const res = await withCookie(env.gw, method, path, s, method === 'POST' ? { body: { kind: 'operator', name: 'x', scopes: ['admin'] } } : {});
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const me = await withCookie(env.gw, 'GET', '/api/v1/me', s);
    expect(me.status).toBe(200);
    expect(me.json).toMatchObject({ principal: { name: 'alice-console', role: 'member' }, role: 'member', sessions: 0 });
    expect((await withCookie(env.gw, 'GET', '/api/v1/me/sessions', s)).json).toEqual({ sessions: [] });
    const other = await withCookie(env.gw, 'GET', `/api/v1/me/sessions/${bobSession}/transcript`, s);
    expect(other.status).toBe(404);
    expect(other.text).not.toContain('hello from bob');
    const usage = await withCookie(env.gw, 'GET', '/api/v1/me/usage', s);
    expect(usage.status).toBe(200);

    // Bob sees his own session and its transcript.
    const bobToken = await mint({ kind: 'client', name: 'bob-web', principalId: bobPerson.principalId });
    const b = await signIn(env.gw, bobToken.secret);
    const mine = await withCookie(env.gw, 'GET', '/api/v1/me/sessions', b);
    expect(mine.json.sessions.map((x: { id: string }) => x.id)).toContain(bobSession);
    const transcript = await withCookie(env.gw, 'GET', `/api/v1/me/sessions/${bobSession}/transcript`, b);
    expect(transcript.status).toBe(200);
    expect(transcript.text).toContain('hello from bob');
    // Operators' Bearer tokens are not members.
    expect((await api(env.gw, 'GET', '/api/v1/me', { token: env.gw.credentials().operatorToken })).status).toBe(401);
  });

  it('the failed-auth lockout applies to the sign-in route (and then refuses even the right token)', async () => {
    const address = '127.0.0.91';
    const post = (token: string) =>
      httpFrom(env.gw, address, 'POST', '/api/v1/auth/session', { 'content-type': 'application/json' }, JSON.stringify({ token }));
    for (let i = 0; i < 10; i++) expect((await post(`swb_o_wrong-console-guess-${i}-xxxxxxxxxxxx`)).status).toBe(401);
    const locked = await post(env.gw.credentials().operatorToken);
    expect(locked.status).toBe(429);
    expect(locked.headers['retry-after']).toMatch(/^\d+$/);
    expect(locked.headers['set-cookie']).toBeUndefined();
    // The same limiter as the control API: the address is locked out there too.
    const bearerTry = await httpFrom(env.gw, address, 'GET', '/api/v1/principals', { authorization: `Bearer ${env.gw.credentials().operatorToken}` });
    expect(bearerTry.status).toBe(429);
  });

  it('hostile sign-in bodies and cookies get a 4xx, never a session or a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(hostileJson, fc.record({ token: hostileJson })),
        fc.oneof(
          fc.stringMatching(/^[\x20-\x7e]{0,300}$/),
          fc.constantFrom('swb_session=__proto__', 'swb_session=constructor; swb_session=x', `swb_session=${'A'.repeat(43)}`),
        ),
        async (body, cookie) => {
          // From an address of its own: the string tokens among them are failed logins that lock it out (429, still a 4xx).
          const res = await httpFrom(
            env.gw,
            '127.0.0.92',
            'POST',
            '/api/v1/auth/session',
            { 'content-type': 'application/json', cookie },
            JSON.stringify(body) ?? 'null',
          );
          expect(res.status, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
          expect(res.status, JSON.stringify(body)).toBeLessThan(500);
          expect(res.headers['set-cookie']).toBeUndefined();
          const who = await api(env.gw, 'GET', '/api/v1/auth/session', { headers: { cookie } });
          expect(who.status).toBe(401);
          const viaApi = await api(env.gw, 'GET', '/api/v1/principals', { headers: { cookie } });
          expect(viaApi.status).toBe(401);
        },
      ),
      fcParams(60),
    );
  });

  it('never logs a token or a cookie value', async () => {
    const t = await mint({ kind: 'operator', name: 'console-canary', scopes: ['read'] });
    const s = await signIn(env.gw, t.secret);
    await withCookie(env.gw, 'GET', '/api/v1/sessions', s);
    await withCookie(env.gw, 'POST', '/api/v1/principals', { cookie: s.cookie }, { body: {} });
    await withCookie(env.gw, 'DELETE', '/api/v1/auth/session', s);
    const value = s.cookie.split('=')[1]!;
    const logs = env.gw.logs().join('\n');
    expect(logs).not.toContain(t.secret);
    expect(logs).not.toContain(value);
    expect(logs).not.toContain(s.csrf);
    expect(logs).not.toContain(env.gw.credentials().operatorToken);
  });
});
