import { type GatewayProcess, type PgServer, api, connectWs, runCli, startPostgres } from '@switchboard/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, chat, connectClient } from './helpers.js';
import { useWebhookGateway } from './webhook-helpers.js';

// Issue 19, acceptance 3: a SQLite gateway populated through the real process (turns through the
// fake model, an approval, principals, tokens, a rule, audit, usage, a memory, a pairing request)
// is stopped, moved with the real `switchboard migrate-storage`, and started on PostgreSQL with
// the same data dir and config: the control API shows the same data, an old token still works,
// and a second run into the same database is refused.
const env = useWebhookGateway({ main: { dmPolicy: 'pairing' } });
let server: PgServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await env.gw.stop();
  await server?.destroy();
});

type Json = Record<string, unknown>;
const get = async (gw: GatewayProcess, path: string): Promise<Json> => {
  const res = await api(gw, 'GET', `/api/v1${path}`, { token: gw.credentials().operatorToken });
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  return res.json as Json;
};

/** What the control API shows of the data: audit first (other reads may add audit entries). */
async function snapshot(gw: GatewayProcess, ownerId: string) {
  const audit = ((await get(gw, '/audit?limit=500')).entries as Json[]).sort((a, b) => Number(a.id) - Number(b.id));
  const sessions = ((await get(gw, '/sessions?limit=500')).sessions as Json[]).sort((a, b) => String(a.id).localeCompare(String(b.id)));
  const transcripts: Record<string, unknown> = {};
  for (const s of sessions) transcripts[String(s.id)] = await get(gw, `/sessions/${s.id}/transcript`);
  return {
    audit,
    sessions,
    transcripts,
    principals: await get(gw, '/principals'),
    tokens: await get(gw, '/tokens'),
    rules: await get(gw, '/rules'),
    approvals: await get(gw, '/approvals'),
    pairing: await get(gw, '/pairing'),
    usage: await get(gw, '/usage'),
    memories: ((await get(gw, `/principals/${ownerId}/memories`)).memories as Json[]).map((m) => m.text),
  };
}

async function pgCounts(url: string): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const tables = (await c.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")).rows.map((r) => r.tablename as string);
    const out: Record<string, number> = {};
    for (const t of tables) out[t] = Number((await c.query(`SELECT count(*) AS n FROM "${t}"`)).rows[0].n);
    return out;
  } finally {
    await c.end();
  }
}

describe('switchboard migrate-storage (issue 19, acceptance 3)', () => {
  it('moves a populated SQLite gateway to PostgreSQL with every session, principal, rule and audit entry intact; a second run is refused', async () => {
    const { fake, platform } = env;
    let gw = env.gw;
    const ownerId = gw.credentials().principalId;

    // Populate through the real gateway: chat turns, an approval, a memory, another person, a rule, a pairing request.
    const owner = await connectClient(gw);
    fake.enqueue({ text: 'Hello from SQLite.' });
    expect((await chat(owner, 'c1', 'hi there')).end.text).toBe('Hello from SQLite.');
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'note.txt', content: 'kept' }, id: 'toolu_w1' }] }, { text: 'Written.' });
    owner.send({ type: 'message', clientId: 'c2', text: 'write a note' });
    const ask = await owner.next((f) => f.type === 'approval_request' && f.clientId === 'c2');
    owner.send({ type: 'approve', approvalId: ask.approvalId, decision: 'allow' });
    expect((await owner.next((f) => f.type === 'final' && f.clientId === 'c2')).text).toBe('Written.');
    fake.enqueue(
      { toolUses: [{ name: 'memory_save', input: { text: 'Zoë drinks her espresso black', tags: ['coffee'] }, id: 'toolu_m1' }] },
      { text: 'Noted.' },
    );
    expect((await chat(owner, 'c3', 'remember how I take my coffee')).end.text).toBe('Noted.');
    const bobToken = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'bob', '--role', 'member'], { gateway: gw })).stdout)
      .secret as string;
    const bob = await connectClient(gw, bobToken);
    fake.enqueue({ text: 'Hi Bob.' });
    expect((await chat(bob, 'b1', 'hello, I am bob')).end.text).toBe('Hi Bob.');
    bob.close();
    owner.close();
    const token = gw.credentials().operatorToken;
    const rule = await api(gw, 'POST', '/api/v1/rules', { token, body: { scope: { kind: 'gateway' }, behavior: 'deny', rule: 'exec' } });
    expect(rule.status).toBe(201);
    expect((await platform.send(gw, platform.dm('stranger', 'let me in'))).json.gate).toBe('pairing');

    const before = await snapshot(gw, ownerId);
    expect(before.sessions.length).toBeGreaterThanOrEqual(2);
    expect((before.approvals.approvals as Json[]).map((a) => a.tool)).toEqual(['write_file']);
    expect(before.memories).toEqual(['Zoë drinks her espresso black']);
    expect((before.pairing.requests as Json[]).length).toBe(1);

    // Refused while the gateway runs on the data dir.
    const url = await server.createDatabase();
    const args = ['migrate-storage', '--from', 'sqlite', '--to', 'postgres', '--url', url];
    const busy = await runCli(args, { gateway: gw });
    expect(busy.code).toBe(75);
    expect(busy.stderr).toMatch(/stop it first/);

    await gw.stop();
    const moved = await runCli(args, { gateway: gw, timeoutMs: 60_000 });
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toMatch(/^sessions\s+\d+ {2}sha256:[0-9a-f]{64}$/m);
    expect(moved.stdout).toMatch(/every count and checksum matched/);
    expect(moved.stdout).toMatch(/set storage.kind to "postgres"/);
    for (const text of [moved.stdout, moved.stderr]) expect(text).not.toContain(server.password);

    // The same data dir and config, on PostgreSQL.
    gw = await gw.restart({ config: { storage: { kind: 'postgres' } }, env: { DATABASE_URL: url } });
    env.gw = gw;
    const ready = await api(gw, 'GET', '/readyz', { token: gw.credentials().operatorToken });
    expect(ready.json.database).toMatchObject({ engine: 'postgres', state: 'up' });
    const after = await snapshot(gw, ownerId);
    const lastOld = Number(before.audit.at(-1)?.id);
    expect(after.audit.filter((e) => Number(e.id) <= lastOld)).toEqual(before.audit);
    expect(after.sessions).toEqual(before.sessions);
    expect(after.transcripts).toEqual(before.transcripts);
    expect(after.principals).toEqual(before.principals);
    expect(after.rules).toEqual(before.rules);
    expect(after.approvals).toEqual(before.approvals);
    expect(after.pairing).toEqual(before.pairing);
    expect(after.usage).toEqual(before.usage);
    expect(after.memories).toEqual(before.memories);
    expect((after.tokens.tokens as Json[]).map((t) => ({ ...t, lastUsedAt: null }))).toEqual(
      (before.tokens.tokens as Json[]).map((t) => ({ ...t, lastUsedAt: null })),
    );

    // An old client token still authenticates, and a new turn is written to PostgreSQL.
    const entriesBefore = (await pgCounts(url)).entries ?? 0;
    const again = await connectWs(gw.wsUrl, { headers: bearer(bobToken) });
    expect((await again.next((f) => f.type === 'hello_ok')).type).toBe('hello_ok');
    fake.enqueue({ text: 'Hi again, from PostgreSQL.' });
    expect((await chat(again, 'b2', 'still there?')).end.text).toBe('Hi again, from PostgreSQL.');
    again.close();
    expect((await pgCounts(url)).entries).toBeGreaterThan(entriesBefore);

    // A second run into the same (now used) database is refused and changes nothing.
    await gw.stop();
    const counts = await pgCounts(url);
    const second = await runCli(args, { gateway: gw, timeoutMs: 60_000 });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/the target database is not empty: table \w+ has rows/);
    expect(second.stderr).not.toContain(server.password);
    expect(await pgCounts(url)).toEqual(counts);
  });
});
