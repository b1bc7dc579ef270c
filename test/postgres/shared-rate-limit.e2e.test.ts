import {
  CANARY_WEBHOOK_SECRET,
  type FakeAnthropic,
  type GatewayProcess,
  type PgServer,
  startFakeAnthropic,
  startGateway,
  startPostgres,
  startWebhookPlatform,
  stopAllGateways,
  type WebhookPlatform,
} from '@switchboard/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Two gateways (replicas) on one PostgreSQL database take a sender's messages from one token
// bucket: the sum admitted through both is one burst, not one burst each.
let server: PgServer;
let fake: FakeAnthropic;
let platform: WebhookPlatform;
const gateways: GatewayProcess[] = [];

beforeAll(async () => {
  server = await startPostgres();
  const url = await server.createDatabase();
  fake = await startFakeAnthropic();
  platform = await startWebhookPlatform({ account: 'main' });
  const main = {
    secret: CANARY_WEBHOOK_SECRET,
    callbackUrl: platform.callbackUrl,
    dmPolicy: 'open',
    allowFrom: ['*'],
    rateLimit: { burst: 3, perMinute: 0.1 },
  };
  for (let i = 0; i < 2; i++)
    gateways.push(await startGateway({ modelUrl: fake.url, storage: { kind: 'postgres', url }, config: { channels: { webhook: { accounts: { main } } } } }));
});
afterAll(async () => {
  await stopAllGateways();
  await platform?.close();
  await fake?.close();
  await server?.destroy();
});

describe('boundary rate limit shared by replicas on PostgreSQL', () => {
  it('a sender alternating between two gateways gets one burst in all; the notice is sent once', async () => {
    const gates: unknown[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await platform.send(gateways[i % 2]!, platform.dm('u1', `message ${i}`));
      expect(res.status).toBeLessThan(300);
      gates.push(res.json.gate);
    }
    expect(gates.filter((g) => g === 'admitted')).toHaveLength(3);
    expect(gates.filter((g) => g === 'rate_limited')).toHaveLength(5);
    expect(gates.slice(0, 3)).toEqual(['admitted', 'admitted', 'admitted']);
    const slowDown = (c: { body: Record<string, unknown> }) => c.body.type === 'notice' && /Please slow down/.test(String(c.body.text));
    await platform.waitFor(slowDown);
    // Another sender has a bucket of their own.
    expect((await platform.send(gateways[1]!, platform.dm('u2', 'hello'))).json.gate).toBe('admitted');
    // One notice per empty spell, although both gateways refused messages.
    expect(platform.callbacks.filter(slowDown)).toHaveLength(1);
  });
});
