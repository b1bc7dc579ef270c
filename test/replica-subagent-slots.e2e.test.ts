import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type GatewayProcess, type PgServer, type Replicas, startPostgres, startReplicas } from '@switchboard/testkit';
import { collectTurn, connectClient, useFakeModel } from './helpers.js';
import { firstText, scriptRoles, subagentConfig, subagentRequests } from './subagent-helpers.js';

// Issue 20: `subagents.perGateway` is the gateway's limit, not each replica's — two replicas on
// one PostgreSQL database count their subagents' slots in the database.

const model = useFakeModel();
let pg: PgServer;
let replicas: Replicas;

beforeAll(async () => {
  pg = await startPostgres();
  replicas = await startReplicas({ count: 2, pg: await pg.createDatabase(), modelUrl: model.fake.url, config: subagentConfig({ perGateway: 1 }) });
}, 120_000);

afterAll(async () => {
  await replicas?.close();
  await pg?.destroy();
});

/** A member with a client token (made through the control API of the first replica), connected to `gw`. */
async function connectPerson(gw: GatewayProcess, name: string) {
  const op = replicas.credentials().operatorToken;
  const p = await api(replicas.at(0), 'POST', '/api/v1/principals', { token: op, body: { name, role: 'member' } });
  const t = await api(replicas.at(0), 'POST', '/api/v1/tokens', { token: op, body: { kind: 'client', principalId: p.json.principal.id } });
  return { ws: await connectClient(gw, t.json.secret as string) };
}

const task = (id: string, prompt: string) => ({ name: 'task', id, input: { description: `task ${id}`, prompt } });

describe('the per-gateway subagent limit across replicas', () => {
  it("a subagent on B waits while one on A holds the gateway's only slot, and runs once it is freed", async () => {
    const { fake } = model;
    const alice = await connectPerson(replicas.at(0), 'alice');
    const bob = await connectPerson(replicas.at(1), 'bob');
    const start = fake.requests.length;
    scriptRoles(
      fake,
      [{ toolUses: [task('toolu_rg1', 'Alice task.')] }, { toolUses: [task('toolu_rg2', 'Bob task.')] }, { text: 'a done' }, { text: 'b done' }],
      {
        'Alice task.': [{ text: 'alice report', hold: true }],
        'Bob task.': [{ text: 'bob report' }],
      },
    );
    alice.ws.send({ type: 'message', clientId: 'rg1', text: 'alice asks' });
    await fake.waitForHeld(1);
    bob.ws.send({ type: 'message', clientId: 'rg2', text: 'bob asks' });
    const waiting = await bob.ws.next((f) => f.type === 'tool' && f.phase === 'progress' && f.toolUseId === 'toolu_rg2');
    expect(waiting.message).toBe('waiting for a free subagent slot');
    expect(subagentRequests(fake, start).map(firstText)).toEqual(['Alice task.']);
    fake.release();
    expect((await collectTurn(alice.ws, 'rg1')).end.type).toBe('final');
    expect((await collectTurn(bob.ws, 'rg2')).end.type).toBe('final');
    fake.setHandler(undefined);
    expect(subagentRequests(fake, start).map(firstText)).toEqual(['Alice task.', 'Bob task.']);
    alice.ws.close();
    bob.ws.close();
  });
});
