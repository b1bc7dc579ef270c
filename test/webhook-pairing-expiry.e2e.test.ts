import { describe, expect, it } from 'vitest';
import { api, type ReceivedCallback } from '@switchboard/testkit';
import { useWebhookGateway } from './webhook-helpers.js';

// The expiry mechanism is under test: a short code lifetime and a fast sweep.
const env = useWebhookGateway({ main: { dmPolicy: 'pairing' } }, { pairing: { codeTtl: '1s', sweepInterval: '300ms', cooldown: '1s' } });

const notice = (match: RegExp) => (c: ReceivedCallback) =>
  c.body.type === 'notice' && c.body.conversation?.id === 'dm-late' && match.test(c.body.text as string);

describe('webhook pairing expiry', () => {
  it('expires an unapproved code after its TTL, discards the held message and tells the sender', async () => {
    const { fake, gw, platform } = env;
    const { operatorToken } = gw.credentials();
    const sent = Date.now();
    expect((await platform.send(gw, platform.dm('late', 'please answer me'))).json.gate).toBe('pairing');
    const issued = await platform.waitFor(notice(/Your pairing code is/));
    const code = /pairing code is ([A-Z0-9]{8})/.exec(issued.body.text as string)![1]!;

    const expired = await platform.waitFor(notice(/expired/), 10_000);
    expect(expired.body.text).toContain(code);
    expect(expired.body.text).toMatch(/discarded/);
    expect(expired.receivedAt - sent).toBeGreaterThanOrEqual(1_000);
    expect(expired.verified).toBe(true);

    const list = await api(gw, 'GET', '/api/v1/pairing?status=expired', { token: operatorToken });
    expect(list.json.requests).toEqual([expect.objectContaining({ code, identity: 'webhook:late', status: 'expired' })]);
    // An expired code can no longer be approved, and the held message never reached the model.
    expect((await api(gw, 'POST', `/api/v1/pairing/${code}/approve`, { token: operatorToken, body: {} })).status).toBe(409);
    expect(fake.requests).toHaveLength(0);

    // Writing again starts over with a fresh code.
    expect((await platform.send(gw, platform.dm('late', 'second try'))).json.gate).toBe('pairing');
    const fresh = await platform.waitForCount(notice(/Your pairing code is/), 2);
    expect(fresh[1]!.body.text).not.toContain(code);
    expect(platform.callbacks.filter(notice(/expired/))).toHaveLength(1);
  });
});
