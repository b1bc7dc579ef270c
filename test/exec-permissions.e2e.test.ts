// Who is offered `exec` through the real gateway (issue 14, acceptance 1, third point): owners and
// admins by default, a member only once an operator switches it on. What runs without asking and
// what the modes do: exec-pipeline.e2e.test.ts.
import { api } from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { collectTurn, toolResultFor, useGateway, connectPerson } from './helpers.js';

const env = useGateway({ client: true });
type Body = { tools?: Array<{ name: string }> };
const toolsOf = (i: number) => ((env.fake.requests[i]?.body as Body | undefined)?.tools ?? []).map((t) => t.name);

const person = (name: string, role: string) => connectPerson(env.gw, name, role);

describe('exec and the roles', () => {
  it('a member is never offered exec, an admin is; an operator can switch it on for that member', async () => {
    const { fake, gw } = env;
    const member = await person('exec-member', 'member');
    const admin = await person('exec-admin', 'admin');
    let start = fake.requests.length;
    member.ws.send({ type: 'message', clientId: 'm1', text: 'hello' });
    await collectTurn(member.ws, 'm1');
    expect(toolsOf(start)).not.toContain('exec');
    expect(toolsOf(start)).toContain('read_file');
    start = fake.requests.length;
    admin.ws.send({ type: 'message', clientId: 'a1', text: 'hello' });
    await collectTurn(admin.ws, 'a1');
    expect(toolsOf(start)).toContain('exec');

    // A member who calls exec anyway (a model inventing it) gets an unknown-tool error: nothing runs.
    fake.enqueue({ toolUses: [{ name: 'exec', input: { command: 'echo sneaky' }, id: 'toolu_m2' }] }, { text: 'ok' });
    member.ws.send({ type: 'message', clientId: 'm2', text: 'try' });
    await collectTurn(member.ws, 'm2');
    const refused = toolResultFor(fake, 'toolu_m2');
    expect(refused.is_error).toBe(true);
    expect(refused.content).not.toContain('sneaky\n');

    const { operatorToken } = gw.credentials();
    const on = await api(gw, 'PUT', '/api/v1/capabilities/exec', {
      token: operatorToken,
      body: { scope: { kind: 'principal', id: member.principalId }, enabled: true },
    });
    expect(on.status).toBe(200);
    start = fake.requests.length;
    member.ws.send({ type: 'message', clientId: 'm3', text: 'hello again' });
    await collectTurn(member.ws, 'm3');
    expect(toolsOf(start)).toContain('exec');
    member.ws.close();
    admin.ws.close();
  });
});
