import { request } from 'node:http';
import { type GatewayProcess, type PgServer, startGateway, startPostgres, stopAllGateways } from '@switchboard/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../telegram-helpers.js';

// Two gateways (replicas) on one PostgreSQL database: wrong tokens sent to either count towards
// one failed-auth lockout of the address, which both then enforce (issue 19: the counters live in
// the store when the storage is PostgreSQL).
let server: PgServer;
let url: string;
let a: GatewayProcess;
let b: GatewayProcess;
let op: string;

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  const config = { auth: { maxFailures: 3, window: '60s', lockout: '5m' } };
  a = await startGateway({ storage: { kind: 'postgres', url }, config });
  b = await startGateway({ storage: { kind: 'postgres', url }, config });
  op = a.credentials().operatorToken;
});
afterAll(async () => {
  await stopAllGateways();
  await server?.destroy();
});

/** GET `path` on gateway `gw` from a chosen loopback source address. */
function from(gw: GatewayProcess, address: string, path: string, token: string): Promise<{ status: number; retryAfter: unknown }> {
  const u = new URL(`${gw.url}${path}`);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'GET', headers: { authorization: `Bearer ${token}` }, localAddress: address },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const wrong = (i: number) => `swb_o_wrong-token-number-${i}-xxxxxxxxxxxxxxxx`;

describe('failed-auth lockout shared by replicas on PostgreSQL', () => {
  it('wrong tokens through either gateway lock the address out on both; another address is not affected', async () => {
    const me = '127.0.0.5';
    // The operator token works on both (one database).
    expect((await from(a, me, '/api/v1/sessions', op)).status).toBe(200);
    expect((await from(b, me, '/api/v1/sessions', op)).status).toBe(200);
    expect((await from(a, me, '/api/v1/sessions', wrong(1))).status).toBe(401);
    expect((await from(b, me, '/api/v1/sessions', wrong(2))).status).toBe(401);
    // Each gateway has seen fewer than maxFailures: neither is locked out on its own count.
    expect((await from(a, me, '/api/v1/sessions', op)).status).toBe(200);
    expect((await from(b, me, '/api/v1/sessions', wrong(3))).status).toBe(401);
    for (const gw of [a, b]) {
      const locked = await from(gw, me, '/api/v1/sessions', op);
      expect(locked.status).toBe(429);
      expect(Number(locked.retryAfter)).toBeGreaterThan(200);
      expect(Number(locked.retryAfter)).toBeLessThanOrEqual(300);
    }
    expect((await from(b, '127.0.0.6', '/api/v1/sessions', op)).status).toBe(200);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const r = await client.query<{ key: string; locked: boolean }>('SELECT key, locked_until > 0 AS locked FROM auth_failures ORDER BY key');
      expect(r.rows).toEqual([
        { key: '127.0.0.5', locked: true },
        { key: '127.0.0.6', locked: false },
      ]);
    } finally {
      await client.end();
    }
  });
});

describe('the shared counters are swept', () => {
  it('a failure window that is over is deleted on the pairing sweep interval; the table does not keep it', async () => {
    const own = await server.createDatabase();
    const gw = await startGateway({
      storage: { kind: 'postgres', url: own },
      config: { auth: { maxFailures: 3, window: '500ms', lockout: '5m' }, pairing: { sweepInterval: '300ms' } },
    });
    expect((await from(gw, '127.0.0.7', '/api/v1/sessions', wrong(9))).status).toBe(401);
    const client = new pg.Client({ connectionString: own });
    await client.connect();
    try {
      const count = async () => Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM auth_failures')).rows[0]?.n);
      expect(await count()).toBe(1);
      // The row goes once the window is over and the gateway's sweep has run.
      await eventually(async () => ((await count()) === 0 ? true : undefined), 15_000);
    } finally {
      await client.end();
    }
  });
});
