import { randomUUID } from 'node:crypto';
import type { ConversationRef } from '@switchboard/core';
import {
  connectWs,
  type ContractHarness,
  type ContractRig,
  FakeChannelEnv,
  type PlatformOutput,
  runChannelContract,
  type WsClient,
  type WsFrame,
} from '@switchboard/testkit';
import { WebsocketUpgrades } from '../src/upgrades.js';
import { WebsocketChannel } from '../src/websocket-channel.js';

const PRINCIPAL = 'p-contract';

/** The WebSocket channel on a real Fastify server, a real `ws` client as the platform side. */
async function websocketRig(): Promise<ContractRig> {
  const env = new FakeChannelEnv();
  const channel = new WebsocketChannel({
    account: 'default',
    allowedOrigins: [],
    helloTimeoutMs: 10_000,
    maxPayload: 1 << 20,
    maxUnauthenticatedPerAddress: 8,
    maxUnauthenticated: 32,
    required: false,
    upgrades: new WebsocketUpgrades(),
  });
  const { secret } = env.addClientToken(PRINCIPAL);
  const conversation: ConversationRef = { channel: 'websocket', account: 'default', id: PRINCIPAL, kind: 'dm' };
  const clients: WsClient[] = [];
  let client: WsClient | null = null;
  const connect = async () => {
    client = await connectWs(`${env.url.replace('http', 'ws')}/ws`, { headers: { authorization: `Bearer ${secret}` } });
    clients.push(client);
    await client.next((f) => f.type === 'hello_ok');
  };
  const live = () => {
    if (!client) throw new Error('no client connected');
    return client;
  };
  /** Sends the message until `accepted` (an `internal` error is the gateway refusing it: the client retries, as docs/protocol.md says). */
  const deliver = async (clientId: string, text: string) => {
    const key = `${PRINCIPAL}:${clientId}`;
    for (let attempt = 0; attempt < 10; attempt++) {
      const c = live();
      c.send({ type: 'message', clientId, text });
      const f = await c.next((fr) => (fr.type === 'accepted' && fr.clientId === clientId) || (fr.type === 'error' && fr.code === 'internal'));
      if (f.type === 'accepted') {
        env.mark('ack', key);
        return;
      }
      env.mark('nack', key);
    }
    throw new Error(`message ${clientId} was never accepted`);
  };
  /** Frames are ordered on the socket: once a hello's answer is in, every earlier frame is too. */
  const sync = async () => {
    const c = live();
    c.send({ type: 'hello', cursor: Number.MAX_SAFE_INTEGER });
    await c.next((f) => f.type === 'hello_ok');
  };
  const toOutput = (f: WsFrame): PlatformOutput | null => {
    if (f.type === 'final') return { kind: 'final', text: f.text, turnId: f.turnId, reason: f.reason };
    if (f.type === 'error' && typeof f.turnId === 'string') return { kind: 'error', text: f.text ?? '', turnId: f.turnId, reason: f.code };
    if (f.type === 'notice') return { kind: 'notice', text: f.text };
    return null;
  };
  return {
    env,
    channel,
    conversation,
    steered: 'final-frame',
    async start() {
      await channel.start(env.contextFor(channel));
      await env.listen();
      await connect();
    },
    async inject(text) {
      const clientId = randomUUID();
      await deliver(clientId, text);
      return { dedupeKey: `${PRINCIPAL}:${clientId}`, text, handle: clientId };
    },
    async redeliver(item) {
      await deliver(item.handle as string, item.text);
    },
    async output() {
      if (live().ws.readyState === live().ws.OPEN) await sync();
      return clients.flatMap((c) => c.frames.map(toOutput).filter((o): o is PlatformOutput => o !== null));
    },
    async breakPlatform() {
      // The platform failing, for a WebSocket channel: the client's connection dies under it.
      live().ws.terminate();
      await live()
        .waitClose()
        .catch(() => undefined);
      return connect;
    },
    async closeClient() {
      await live().close();
    },
    async close() {
      for (const c of clients) await c.close().catch(() => undefined);
      await env.close();
    },
  };
}

const harness: ContractHarness = { name: 'websocket', setup: websocketRig };
runChannelContract(harness);
