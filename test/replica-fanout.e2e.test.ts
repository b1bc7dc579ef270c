import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, connectWs, type GatewayProcess, type PgServer, type Replicas, runCli, startPostgres, startReplicas } from '@switchboard/testkit';
import { bearer, collectTurn, connectClient, useFakeModel } from './helpers.js';

// Issue 20, fan-out: three gateway processes on one PostgreSQL database (own data dirs, one
// shared workspaces root). What one replica decides or announces reaches the others through
// LISTEN/NOTIFY with ids only; content is read from the database.

const model = useFakeModel();
let pg: PgServer;
let replicas: Replicas;
let a: GatewayProcess;
let b: GatewayProcess;
let c: GatewayProcess;
let root: string;

beforeAll(async () => {
  pg = await startPostgres();
  replicas = await startReplicas({ count: 3, pg: await pg.createDatabase(), modelUrl: model.fake.url });
  [a, b, c] = [replicas.at(0), replicas.at(1), replicas.at(2)];
  root = replicas.workspacesRoot;
}, 120_000);

afterAll(async () => {
  await replicas?.close();
  await pg?.destroy();
});

const owner = () => replicas.credentials();

describe('replicas: approvals and turn frames fan out', () => {
  it('an approval decided through replica C completes a turn waiting on replica A; the person’s socket on B sees it all', async () => {
    const { fake } = model;
    const onA = await connectClient(a, owner().clientToken);
    const onB = await connectClient(b, owner().clientToken);
    fake.enqueue(
      { toolUses: [{ name: 'write_file', input: { path: 'fanout/approved.txt', content: 'yes' }, id: 'toolu_fanout_1' }] },
      { text: 'written through C' },
    );
    onA.send({ type: 'message', clientId: 'fan-1', text: 'write the file' });
    const request = await onA.next((f) => f.type === 'approval_request' && f.clientId === 'fan-1');
    // The viewer on B gets the same request (the turn runs on A).
    const seenOnB = await onB.next((f) => f.type === 'approval_request' && f.approvalId === request.approvalId);
    expect(seenOnB).toMatchObject({ turnId: request.turnId, tool: 'write_file' });

    const decided = await api(c, 'POST', `/api/v1/approvals/${request.approvalId}/decision`, { token: owner().operatorToken, body: { decision: 'allow' } });
    expect(decided.status).toBe(200);

    const turnOnA = await collectTurn(onA, 'fan-1');
    expect(turnOnA.end).toMatchObject({ type: 'final', text: 'written through C' });
    const resolved = (f: { type?: string; turnId?: unknown; allowed?: unknown }) =>
      f.type === 'approval_resolved' && f.turnId === request.turnId && f.allowed === true;
    expect(onA.frames.some(resolved)).toBe(true);
    const turnOnB = await collectTurn(onB, 'fan-1');
    expect(turnOnB.end).toMatchObject({ type: 'final', text: 'written through C', cursor: turnOnA.end.cursor });
    expect(turnOnB.deltas.join('')).toBe(turnOnA.deltas.join(''));
    expect(onB.frames.some(resolved)).toBe(true);
    // The tool ran once, on A, in the shared workspace.
    expect(existsSync(join(root, 'default', 'people', owner().principalId, 'fanout', 'approved.txt'))).toBe(true);
    // The final is sent once on each socket.
    expect(onA.frames.filter((f) => f.type === 'final' && f.clientId === 'fan-1')).toHaveLength(1);
    expect(onB.frames.filter((f) => f.type === 'final' && f.clientId === 'fan-1')).toHaveLength(1);
    onA.close();
    onB.close();
  });

  it('a person’s own answer from a socket on B wakes the turn waiting on A; a denial is final everywhere', async () => {
    const { fake } = model;
    const onA = await connectClient(a, owner().clientToken);
    const onB = await connectClient(b, owner().clientToken);
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'fanout/denied.txt', content: 'no' }, id: 'toolu_fanout_2' }] }, { text: 'not written' });
    onA.send({ type: 'message', clientId: 'fan-2', text: 'write another file' });
    const request = await onB.next((f) => f.type === 'approval_request' && f.clientId === 'fan-2');
    onB.send({ type: 'approve', approvalId: request.approvalId, decision: 'deny' });
    expect(await onB.next((f) => f.type === 'approval_result')).toMatchObject({ outcome: 'decided', status: 'denied' });
    expect((await collectTurn(onA, 'fan-2')).end).toMatchObject({ type: 'final', text: 'not written' });
    expect(existsSync(join(root, 'default', 'people', owner().principalId, 'fanout', 'denied.txt'))).toBe(false);
    // A's control API reads the same decision; a second answer through A is told it was decided.
    const again = await api(a, 'POST', `/api/v1/approvals/${request.approvalId}/decision`, { token: owner().operatorToken, body: { decision: 'allow' } });
    expect(again.status).toBe(409);
    onA.close();
    onB.close();
  });
});

describe('replicas: access changes close sockets on every replica', () => {
  it('revoking a token through B closes its sockets on A and C at once', async () => {
    const created = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'rhea', '--role', 'member'], { gateway: a })).stdout) as {
      secret: string;
      tokenId: string;
    };
    const onA = await connectWs(a.wsUrl, { headers: bearer(created.secret) });
    const onC = await connectWs(c.wsUrl, { headers: bearer(created.secret) });
    await onA.next((f) => f.type === 'hello_ok');
    await onC.next((f) => f.type === 'hello_ok');
    expect((await api(b, 'DELETE', `/api/v1/tokens/${created.tokenId}`, { token: owner().operatorToken })).status).toBe(200);
    expect(await onA.waitClose(10_000)).toMatchObject({ code: 1008, reason: 'token revoked' });
    expect(await onC.waitClose(10_000)).toMatchObject({ code: 1008, reason: 'token revoked' });
    await expect(connectWs(c.wsUrl, { headers: bearer(created.secret) })).rejects.toMatchObject({ status: 401 });
  });

  it('demoting a principal through C closes their sockets on A; deleting one through A closes them on B', async () => {
    const op = owner().operatorToken;
    const dana = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'dana', '--role', 'admin'], { gateway: a })).stdout) as {
      secret: string;
      principalId: string;
    };
    const onA = await connectWs(a.wsUrl, { headers: bearer(dana.secret) });
    await onA.next((f) => f.type === 'hello_ok');
    expect((await api(c, 'PATCH', `/api/v1/principals/${dana.principalId}`, { token: op, body: { role: 'member' } })).status).toBe(200);
    expect(await onA.waitClose(10_000)).toMatchObject({ code: 1008, reason: 'role changed' });

    const onB = await connectWs(b.wsUrl, { headers: bearer(dana.secret) });
    await onB.next((f) => f.type === 'hello_ok');
    expect((await api(a, 'DELETE', `/api/v1/principals/${dana.principalId}`, { token: op })).status).toBe(200);
    expect(await onB.waitClose(10_000)).toMatchObject({ code: 1008, reason: 'principal removed' });
  });
});
