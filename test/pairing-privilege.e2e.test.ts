import { describe, expect, it } from 'vitest';
import { api, type ReceivedCallback } from '@switchboard/testkit';
import { useWebhookGateway } from './webhook-helpers.js';

// Issue 10, point 1: a `pairing`-scoped operator token must not be able to make a stranger an
// existing principal (least of all the owner), nor create one above the account's `pairingRole`,
// nor learn other principals' ids from the pairing list.
const env = useWebhookGateway({ main: { dmPolicy: 'pairing', pairingRole: 'member' } });

const CODE = /pairing code (?:is )?([A-Z0-9]{8})\b/;
const codeNotice = (sender: string) => (c: ReceivedCallback) =>
  c.body.type === 'notice' && c.body.conversation?.id === `dm-${sender}` && CODE.test(c.body.text as string);

/** A stranger writes in and gets a pairing code. */
async function stranger(sender: string): Promise<string> {
  const { gw, platform } = env;
  expect((await platform.send(gw, platform.dm(sender, `hello from ${sender}`))).json.gate).toBe('pairing');
  return CODE.exec((await platform.waitFor(codeNotice(sender))).body.text as string)![1]!;
}

async function mintPairingToken(): Promise<string> {
  const res = await api(env.gw, 'POST', '/api/v1/tokens', {
    token: env.gw.credentials().operatorToken,
    body: { kind: 'operator', name: 'door', scopes: ['pairing'] },
  });
  expect(res.status).toBe(201);
  return res.json.secret as string;
}

describe('pairing approval privilege (issue 10, point 1)', () => {
  it('a pairing-only token cannot link a stranger to the owner, to any existing principal, or above pairingRole', async () => {
    const { gw } = env;
    const { operatorToken: admin, principalId: ownerId } = gw.credentials();
    const door = await mintPairingToken();
    const code = await stranger('mallory');
    const approve = (token: string, body: Record<string, unknown>) => api(gw, 'POST', `/api/v1/pairing/${code}/approve`, { token, body });

    const asOwner = await approve(door, { principalId: ownerId });
    expect(asOwner.status).toBe(403);
    expect(asOwner.json.message).toMatch(/principalId/);
    expect(asOwner.json.message).toMatch(/admin/);

    const member = await api(gw, 'POST', '/api/v1/principals', { token: admin, body: { name: 'bob', role: 'member' } });
    expect(member.status).toBe(201);
    const asMember = await approve(door, { principalId: member.json.principal.id });
    expect(asMember.status).toBe(403);

    const asAdminRole = await approve(door, { role: 'admin' });
    expect(asAdminRole.status).toBe(403);
    expect(asAdminRole.json.message).toMatch(/pairingRole/);

    // Nothing was linked: the stranger is still pending and knows nobody.
    const owner = await api(gw, 'GET', `/api/v1/principals/${ownerId}`, { token: admin });
    expect(owner.json.principal.identities.map((i: { identity: string }) => i.identity)).not.toContain('webhook:mallory');
    const still = await api(gw, 'GET', '/api/v1/pairing?status=pending', { token: admin });
    expect(still.json.requests.map((r: { code: string }) => r.code)).toContain(code);

    // Even an admin cannot make a stranger the owner through pairing.
    const adminAsOwner = await approve(admin, { principalId: ownerId });
    expect(adminAsOwner.status).toBe(403);
    expect(adminAsOwner.json.message).toMatch(/owner/);
    expect(
      (await api(gw, 'GET', `/api/v1/principals/${ownerId}`, { token: admin })).json.principal.identities.map((i: { identity: string }) => i.identity),
    ).not.toContain('webhook:mallory');

    // An admin may link to an existing non-owner principal; it is audited as privilege-relevant.
    const linked = await approve(admin, { principalId: member.json.principal.id });
    expect(linked.status).toBe(200);
    expect(linked.json).toMatchObject({ outcome: 'approved', principalId: member.json.principal.id });
    const audit = await api(gw, 'GET', '/api/v1/audit?action=pairing.linked', { token: admin });
    expect(audit.json.entries).toEqual([
      expect.objectContaining({
        actor: 'operator:bootstrap-operator',
        target: code,
        detail: expect.objectContaining({ identity: 'webhook:mallory', principalId: member.json.principal.id, role: 'member', privileged: true }),
      }),
    ]);
  });

  it('a pairing-only token creates new principals at pairingRole or below, and sees no principal ids in the list', async () => {
    const { gw } = env;
    const { operatorToken: admin } = gw.credentials();
    const door = await mintPairingToken();
    const code = await stranger('carol');
    const approved = await api(gw, 'POST', `/api/v1/pairing/${code}/approve`, { token: door, body: { role: 'guest' } });
    expect(approved.status).toBe(200);
    const created = await api(gw, 'GET', `/api/v1/principals/${approved.json.principalId}`, { token: admin });
    expect(created.json.principal).toMatchObject({ role: 'guest', identities: [expect.objectContaining({ identity: 'webhook:carol' })] });

    const asDoor = await api(gw, 'GET', '/api/v1/pairing?status=approved', { token: door });
    expect(asDoor.status).toBe(200);
    expect(asDoor.json.requests.length).toBeGreaterThanOrEqual(2);
    for (const r of asDoor.json.requests) expect(r).not.toHaveProperty('principalId');
    // An operator who may read principals anyway still sees the link.
    const asAdmin = await api(gw, 'GET', '/api/v1/pairing?status=approved', { token: admin });
    expect(asAdmin.json.requests.map((r: { principalId: string }) => r.principalId)).toContain(approved.json.principalId);
  });
});
