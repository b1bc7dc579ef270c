import type { AddressInfo } from 'node:net';
import type { Channel, ChannelContext } from '@switchboard/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { websocketModule } from '../src/module.js';

const deps = { dataDir: '/nonexistent', log: Fastify().log as unknown as ChannelContext['log'] };

/**
 * The members of the channel context the WebSocket channel reaches while it starts and admits a
 * token-bearing upgrade; each account's principal is named after the account, so a client can
 * tell which account's channel took its connection.
 */
function contextFor(app: FastifyInstance, account: string): ChannelContext {
  const ctx = {
    log: app.log,
    http: { register: async (plugin: Parameters<FastifyInstance['register']>[0]) => void (await app.register(plugin)) },
    inbox: { accepting: () => true },
    clientAuth: {
      onAccessChange: () => () => undefined,
      addressOf: () => '127.0.0.1',
      verify: async (secret: string) => (secret === 'good' ? { principalId: `p-${account}`, tokenId: `t-${account}` } : null),
    },
  };
  return ctx as unknown as ChannelContext;
}

/** The first frame the server sends on a connection made with a valid token. */
function firstFrame(url: string): Promise<{ type: string; principalId?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: 'Bearer good' } });
    ws.once('message', (data) => {
      resolve(JSON.parse(String(data)) as { type: string; principalId?: string });
      ws.close();
    });
    ws.once('error', reject);
  });
}

let app: FastifyInstance | null = null;
let channels: Channel[] = [];

afterEach(async () => {
  for (const c of channels) await c.stop('shutdown');
  channels = [];
  await app?.close();
  app = null;
});

describe('websocketModule', () => {
  it('parses an account with the defaults in the schema and refuses keys it does not know', () => {
    const parsed = websocketModule.accountSchema.parse({});
    expect(parsed).toMatchObject({ dmPolicy: 'allowlist', allowFrom: [], required: false, helloTimeout: 10_000, maxPayload: 1024 * 1024 });
    expect(parsed.rateLimit).toEqual({ burst: 10, perMinute: 20 });
    const bad = websocketModule.accountSchema.safeParse({ groups: {}, helloTimeout: 'soon' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => [i.code, i.path.join('.')])).toEqual([
      ['custom', 'helloTimeout'],
      ['unrecognized_keys', ''],
    ]);
  });

  it('creates one channel per account, all behind one upgrade listener that routes by path', async () => {
    app = Fastify();
    const accounts = { default: websocketModule.accountSchema.parse({}), second: websocketModule.accountSchema.parse({ maxPayload: 2048 }) };
    channels = await websocketModule.createChannels(accounts, deps);
    expect(channels.map((c) => [c.id, c.type])).toEqual([
      ['websocket:default', 'websocket'],
      ['websocket:second', 'websocket'],
    ]);
    for (const c of channels) await c.start(contextFor(app, c.account));
    await app.listen({ host: '127.0.0.1', port: 0 });
    expect(app.server.listenerCount('upgrade')).toBe(1);
    const { port } = app.server.address() as AddressInfo;
    const [first, second] = await Promise.all([firstFrame(`ws://127.0.0.1:${port}/ws`), firstFrame(`ws://127.0.0.1:${port}/ws/second`)]);
    expect(first).toMatchObject({ type: 'hello_ok', principalId: 'p-default' });
    expect(second).toMatchObject({ type: 'hello_ok', principalId: 'p-second' });
  });
});
