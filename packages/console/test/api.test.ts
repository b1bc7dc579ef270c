import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, apiUrl, createApiClient, errorOf, seg } from '../src/api';
import { loadSession, signIn, signOut } from '../src/session';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

// A loopback server that records every request and answers what the test scripted for its path.
let server: Server;
let origin = '';
const seen: Seen[] = [];
let answers: Record<string, { status: number; body: string; type?: string }> = {};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const a = answers[`${req.method} ${(req.url ?? '').split('?')[0]}`] ?? {
        status: 404,
        body: JSON.stringify({ code: 'not_found', message: 'No such route.' }),
      };
      res.writeHead(a.status, { 'content-type': a.type ?? 'application/json' });
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

beforeEach(() => {
  seen.length = 0;
  answers = {};
});

/** What the page's fetch would do with a relative URL: resolve it against the page's origin. The init is recorded. */
const inits: RequestInit[] = [];
const pageFetch = (input: RequestInfo | URL, init?: RequestInit) => {
  inits.push(init ?? {});
  return fetch(new URL(String(input), origin), init);
};

const SESSION = { kind: 'operator', name: 'ops', scopes: ['read', 'approvals'], csrfToken: 'csrf-123', expiresAt: '2026-12-06T12:00:00.000Z' };

describe('api client', () => {
  it('sends X-CSRF-Token on POST, PUT, PATCH and DELETE and never on GET', async () => {
    const api = createApiClient({ fetch: pageFetch });
    for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) answers[`${m} /api/v1/things`] = { status: 200, body: '{"ok":true}' };
    api.setCsrfToken('tok-1');
    await api.get('/things');
    await api.post('/things', { a: 1 });
    await api.put('/things', { a: 2 });
    await api.patch('/things', { a: 3 });
    await api.del('/things');
    expect(seen.map((s) => [s.method, s.headers['x-csrf-token']])).toEqual([
      ['GET', undefined],
      ['POST', 'tok-1'],
      ['PUT', 'tok-1'],
      ['PATCH', 'tok-1'],
      ['DELETE', 'tok-1'],
    ]);
    expect(seen[1]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ a: 1 });
    expect(seen[4]?.headers['content-type']).toBeUndefined();
  });

  it('uses relative same-origin URLs under /api/v1 with credentials same-origin', async () => {
    inits.length = 0;
    const urls: string[] = [];
    const api = createApiClient({
      fetch: (input, init) => {
        urls.push(String(input));
        return pageFetch(input, init);
      },
    });
    answers['GET /api/v1/sessions'] = { status: 200, body: '{"sessions":[]}' };
    await api.get('/sessions', { principalId: 'p 1', channel: '', limit: 5, offset: undefined });
    expect(urls).toEqual(['/api/v1/sessions?principalId=p+1&limit=5']);
    expect(inits[0]?.credentials).toBe('same-origin');
    expect(inits[0]?.redirect).toBe('error');
  });

  it('turns error answers into ApiError with the code and message, and reports a 401', async () => {
    let unauthorized = 0;
    const api = createApiClient({ fetch: pageFetch, onUnauthorized: () => unauthorized++ });
    answers['POST /api/v1/approvals/a1/decision'] = {
      status: 409,
      body: JSON.stringify({ code: 'already_decided', message: 'This approval was already decided (allowed).', approval: { id: 'a1' } }),
    };
    const err = await api.post('/approvals/a1/decision', { decision: 'allow' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status: 409,
      code: 'already_decided',
      message: 'This approval was already decided (allowed).',
      body: { approval: { id: 'a1' } },
    });
    answers['GET /api/v1/principals'] = { status: 401, body: JSON.stringify({ code: 'unauthorized', message: 'Sign in.' }) };
    await expect(api.get('/principals')).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(unauthorized).toBe(1);
    answers['GET /api/v1/broken'] = { status: 502, body: '<html>bad gateway</html>', type: 'text/html' };
    await expect(api.get('/broken')).rejects.toMatchObject({ status: 502, code: 'http_502' });
  });

  it('reports a network failure as code "network"', async () => {
    const api = createApiClient({ fetch: () => Promise.reject(new TypeError('fetch failed')) });
    await expect(api.get('/x')).rejects.toMatchObject({ status: 0, code: 'network' });
  });

  it('answers undefined-free JSON and null for an empty body', async () => {
    const api = createApiClient({ fetch: pageFetch });
    answers['DELETE /api/v1/empty'] = { status: 204, body: '' };
    expect(await api.del('/empty')).toBeNull();
  });

  it('encodes ids as one path segment and refuses paths without a leading slash', () => {
    expect(`/sessions/${seg('../../auth/session?x=1#y')}/reset`).toBe('/sessions/..%2F..%2Fauth%2Fsession%3Fx%3D1%23y/reset');
    expect(apiUrl('/a', { b: 'c&d=e' })).toBe('/api/v1/a?b=c%26d%3De');
    expect(() => apiUrl('http://evil.example/x')).toThrow(/must start with/);
  });

  it('errorOf accepts only the { code, message } shape', () => {
    expect(errorOf(400, { code: 'bad_request', message: 'body/name: too long' })).toMatchObject({ code: 'bad_request' });
    expect(errorOf(400, { code: 1, message: 'x' })).toMatchObject({ code: 'http_400' });
    expect(errorOf(500, null)).toMatchObject({ code: 'http_500' });
    expect(errorOf(500, '__proto__')).toMatchObject({ code: 'http_500' });
  });
});

describe('console session', () => {
  it('signs in with the token in the body only, then sends that CSRF token; sign-out forgets it', async () => {
    const api = createApiClient({ fetch: pageFetch });
    answers['POST /api/v1/auth/session'] = { status: 200, body: JSON.stringify(SESSION) };
    answers['POST /api/v1/rules'] = { status: 201, body: '{}' };
    answers['DELETE /api/v1/auth/session'] = { status: 200, body: '{}' };
    const s = await signIn(api, 'swb_o_secret');
    expect(s).toMatchObject({ kind: 'operator', name: 'ops', csrfToken: 'csrf-123' });
    expect(seen[0]?.url).toBe('/api/v1/auth/session');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ token: 'swb_o_secret' });
    expect(seen[0]?.headers.authorization).toBeUndefined();
    await api.post('/rules', {});
    expect(seen[1]?.headers['x-csrf-token']).toBe('csrf-123');
    expect(seen[1]?.url).not.toContain('swb_o_secret');
    await signOut(api);
    expect(seen[2]).toMatchObject({ method: 'DELETE', url: '/api/v1/auth/session' });
    expect(seen[2]?.headers['x-csrf-token']).toBe('csrf-123');
    await api.post('/rules', {});
    expect(seen[3]?.headers['x-csrf-token']).toBeUndefined();
  });

  it('loadSession answers null on 401 and the session otherwise; a wrong shape is an error naming the field', async () => {
    const api = createApiClient({ fetch: pageFetch });
    answers['GET /api/v1/auth/session'] = { status: 401, body: JSON.stringify({ code: 'unauthorized', message: 'no session' }) };
    expect(await loadSession(api)).toBeNull();
    answers['GET /api/v1/auth/session'] = {
      status: 200,
      body: JSON.stringify({ ...SESSION, kind: 'client', principalId: 'p1', role: 'member', webChat: false }),
    };
    expect(await loadSession(api)).toMatchObject({ kind: 'client', principalId: 'p1', webChat: false });
    answers['GET /api/v1/auth/session'] = { status: 200, body: JSON.stringify({ ...SESSION, csrfToken: '' }) };
    await expect(loadSession(api)).rejects.toThrow(/csrfToken/);
    answers['GET /api/v1/auth/session'] = { status: 500, body: JSON.stringify({ code: 'internal', message: 'boom' }) };
    await expect(loadSession(api)).rejects.toMatchObject({ status: 500 });
  });
});
