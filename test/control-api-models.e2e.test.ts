import { describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { useGateway } from './helpers.js';

// Issue 13 item 1: GET /api/v1/models shows operators the effective per-model values: the
// configured entry over the known table, the known table, and the generic default.

const env = useGateway({
  config: {
    model: { name: 'claude-sonnet-4-5-20250929', fallback: 'claude-test', maxTokens: 2048 },
    models: {
      'claude-sonnet-4-5-20250929': { contextWindow: 100_000, price: { input: 2.5 } },
      'claude-haiku-4-5': {},
    },
  },
});

describe('GET /api/v1/models', () => {
  it('lists the primary, the fallback and every entry with their effective values and sources', async () => {
    const res = await api(env.gw, 'GET', '/api/v1/models', { token: env.gw.credentials().operatorToken });
    expect(res.status).toBe(200);
    expect(res.json.maxTokens).toBe(2048);
    const models = res.json.models as { name: string }[];
    expect(models.map((m) => m.name)).toEqual(['claude-sonnet-4-5-20250929', 'claude-test', 'claude-haiku-4-5']);
    expect(models[0]).toEqual({
      name: 'claude-sonnet-4-5-20250929',
      contextWindow: 100_000,
      outputReserve: 20_000,
      maxOutputTokens: 64_000,
      minCacheTokens: 1024,
      price: { input: 2.5, output: 15, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6 },
      source: 'config',
      roles: ['primary'],
    });
    expect(models[1]).toEqual({
      name: 'claude-test',
      contextWindow: 200_000,
      outputReserve: 20_000,
      maxOutputTokens: 128_000,
      minCacheTokens: 1024,
      price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6 },
      source: 'generic',
      roles: ['fallback'],
    });
    expect(models[2]).toMatchObject({ name: 'claude-haiku-4-5', source: 'config', roles: [], minCacheTokens: 4096, maxOutputTokens: 64_000 });
    expect(models[2]).toMatchObject({ price: { input: 1, output: 5, cacheRead: 0.1, cacheWrite5m: 1.25, cacheWrite1h: 2 } });
  });

  it('needs an operator token with the read scope, and is in the OpenAPI document', async () => {
    const anon = await api(env.gw, 'GET', '/api/v1/models');
    expect(anon.status).toBe(401);
    const op = env.gw.credentials().operatorToken;
    const minted = await api(env.gw, 'POST', '/api/v1/tokens', { token: op, body: { kind: 'operator', name: 'models-approvals', scopes: ['approvals'] } });
    expect(minted.status).toBe(201);
    const approvalsOnly = minted.json.secret as string;
    const denied = await api(env.gw, 'GET', '/api/v1/models', { token: approvalsOnly });
    expect(denied.status).toBe(403);
    const doc = await api(env.gw, 'GET', '/api/v1/openapi.json');
    const route = doc.json.paths['/api/v1/models'].get;
    expect(route['x-switchboard-scope']).toBe('read');
    expect(route.responses['200'].content['application/json'].schema.properties.models.type).toBe('array');
  });
});
