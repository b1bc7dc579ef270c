import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startGateway, stopAllGateways, type GatewayProcess } from '@switchboard/testkit';

// Acceptance 4: every control-API route refuses a token without its scope (403) and a request
// without a token (401), table-driven over the routes of the OpenAPI document. Scopes come only
// from the token record: headers claiming scopes are ignored.

const SCOPES = ['read', 'write', 'admin', 'approvals', 'pairing'] as const;
type Scope = (typeof SCOPES)[number];

let gw: GatewayProcess;
/** For each scope: a token with every scope except it (and except `admin`, which implies all). */
const lacking = new Map<Scope, string>();
/** For each scope: a token with exactly that scope. */
const only = new Map<Scope, string>();
const routes: Array<{ method: string; path: string; scope: Scope; hasBody: boolean }> = [];

const SCOPE_CLAIMS = { 'x-switchboard-scopes': 'admin', 'x-openclaw-scopes': 'admin,operator.admin', 'x-scopes': 'admin' };

/** A concrete URL for a templated path: any value will do, auth runs before validation. */
const fill = (path: string) =>
  path
    .replace('{code}', 'ABCDEFGH')
    .replace('{field}', 'dmPolicy')
    .replace(/\{id\}/g, path.startsWith('/api/v1/channels') ? 'websocket:default' : '00000000-0000-4000-8000-000000000000')
    .replace(/\{[A-Za-z]+\}/g, 'missing');

async function mint(name: string, scopes: readonly Scope[], admin: string): Promise<string> {
  const res = await api(gw, 'POST', '/api/v1/tokens', { token: admin, body: { kind: 'operator', name, scopes } });
  expect(res.status).toBe(201);
  return res.json.secret as string;
}

beforeAll(async () => {
  gw = await startGateway();
  const admin = gw.credentials().operatorToken;
  for (const s of SCOPES) {
    lacking.set(
      s,
      await mint(
        `lacks-${s}`,
        SCOPES.filter((x) => x !== s && x !== 'admin'),
        admin,
      ),
    );
    only.set(s, await mint(`only-${s}`, [s], admin));
  }
  const doc = await api(gw, 'GET', '/api/v1/openapi.json');
  expect(doc.status).toBe(200);
  for (const [path, ops] of Object.entries(doc.json.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      // Console routes (sign-in, /me, the live stream) are not operator-scoped: test/console-auth.e2e.test.ts covers them.
      if (op['x-switchboard-access'] !== undefined) continue;
      routes.push({ method: method.toUpperCase(), path, scope: op['x-switchboard-scope'] as Scope, hasBody: op.requestBody !== undefined });
    }
  }
});
afterAll(async () => {
  await stopAllGateways();
});

describe('control API scope checks', () => {
  it('publishes only /api/v1 routes, each with a known scope and bearer security', async () => {
    expect(routes.length).toBeGreaterThanOrEqual(30);
    for (const r of routes) {
      expect(r.path.startsWith('/api/v1/'), r.path).toBe(true);
      expect(SCOPES, `${r.method} ${r.path}`).toContain(r.scope);
    }
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      'GET /api/v1/principals',
      'POST /api/v1/principals',
      'PATCH /api/v1/principals/{id}',
      'DELETE /api/v1/principals/{id}',
      'POST /api/v1/principals/{id}/identities',
      'DELETE /api/v1/principals/{id}/identities',
      'GET /api/v1/capabilities',
      'PUT /api/v1/capabilities/{id}',
      'GET /api/v1/rules',
      'POST /api/v1/rules',
      'DELETE /api/v1/rules/{id}',
      'POST /api/v1/sessions/{id}/reset',
      'DELETE /api/v1/sessions/{id}',
      'GET /api/v1/tokens',
      'POST /api/v1/tokens',
      'DELETE /api/v1/tokens/{id}',
      'GET /api/v1/audit',
    ]) {
      expect(keys).toContain(expected);
    }
    expect(keys.some((k) => k.includes('openapi.json') || k.includes('/docs') || k.includes('healthz'))).toBe(false);
  });

  it('every route answers 401 without a token and 403 to a token lacking its scope, whatever headers claim', async () => {
    const seen: string[] = [];
    for (const r of routes) {
      const path = fill(r.path);
      const body = r.hasBody ? {} : undefined;
      const anon = await api(gw, r.method, path, { headers: SCOPE_CLAIMS, ...(body ? { body } : {}) });
      expect(anon.status, `${r.method} ${path} without a token`).toBe(401);
      expect(anon.json).toMatchObject({ code: 'unauthorized' });
      const denied = await api(gw, r.method, path, { token: lacking.get(r.scope)!, headers: SCOPE_CLAIMS, ...(body ? { body } : {}) });
      expect(denied.status, `${r.method} ${path} lacking ${r.scope}`).toBe(403);
      expect(denied.json).toMatchObject({ code: 'forbidden' });
      expect(denied.json.message).toContain(r.scope);
      // Control: the route's own scope gets past the guard (the dummy ids then give 400/404/409).
      const allowed = await api(gw, r.method, path, { token: only.get(r.scope)!, ...(body ? { body } : {}) });
      expect([401, 403], `${r.method} ${path} with ${r.scope}`).not.toContain(allowed.status);
      seen.push(`${r.method} ${r.path}`);
    }
    expect(seen).toHaveLength(routes.length);
  });

  it('admin implies every scope; a client token is never an operator token', async () => {
    const admin = only.get('admin')!;
    for (const r of routes.filter((x) => x.method === 'GET')) {
      const res = await api(gw, 'GET', fill(r.path), { token: admin });
      expect([401, 403], r.path).not.toContain(res.status);
    }
    const res = await api(gw, 'GET', '/api/v1/sessions', { token: gw.credentials().clientToken, headers: SCOPE_CLAIMS });
    expect(res.status).toBe(401);
  });

  it('serves the OpenAPI document without a token, and Swagger UI at /docs', async () => {
    const doc = await api(gw, 'GET', '/api/v1/openapi.json');
    expect(doc.json.openapi).toMatch(/^3\./);
    expect(doc.json.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.text).not.toContain(gw.credentials().operatorToken);
    const post = doc.json.paths['/api/v1/principals'].post;
    expect(post.requestBody.content['application/json'].schema.properties.name.pattern).toBeDefined();
    expect(post.responses['403']).toBeDefined();
    const ui = await api(gw, 'GET', '/docs');
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toContain('text/html');
  });
});
