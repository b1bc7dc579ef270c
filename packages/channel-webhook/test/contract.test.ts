import type { ConversationRef } from '@switchboard/core';
import {
  type ContractHarness,
  type ContractRig,
  FakeChannelEnv,
  type PlatformOutput,
  runChannelContract,
  startWebhookPlatform,
  type WebhookMessage,
} from '@switchboard/testkit';
import { WebhookChannel } from '../src/webhook-channel.js';

const SECRET = 'contract-webhook-secret-0123456789abcdef';

/** The webhook channel on a real Fastify server; the testkit webhook platform POSTs over real HTTP and takes the callbacks. */
async function webhookRig(): Promise<ContractRig> {
  const env = new FakeChannelEnv();
  const platform = await startWebhookPlatform({ secret: SECRET, account: 'main' });
  const channel = new WebhookChannel({
    account: 'main',
    secret: SECRET,
    callbackUrl: platform.callbackUrl,
    replayWindowMs: 60_000,
    callbackRetries: 1,
    callbackRetryDelayMs: 1,
    callbackTimeoutMs: 5_000,
    maxBodyBytes: 64 * 1024,
    required: false,
    log: env.log,
  });
  const conversation: ConversationRef = { channel: 'webhook', account: 'main', id: 'dm-alice', kind: 'dm' };
  /** Posts until the gateway answers 2xx, as a platform retrying a refused request does. */
  const deliver = async (message: WebhookMessage) => {
    for (let attempt = 0; attempt < 10; attempt++) {
      const res = await platform.send({ url: env.url }, message);
      if (res.status >= 200 && res.status < 300) {
        env.mark('ack', message.id, String(res.status));
        return;
      }
      env.mark('nack', message.id, String(res.status));
    }
    throw new Error(`message ${message.id} was never taken`);
  };
  return {
    env,
    channel,
    conversation,
    steered: 'nothing',
    async start() {
      await channel.start(env.contextFor(channel));
      await env.listen();
    },
    async inject(text) {
      const message = platform.dm('alice', text);
      await deliver(message);
      return { dedupeKey: message.id, text, handle: message };
    },
    async redeliver(item) {
      await deliver(item.handle as WebhookMessage);
    },
    async output() {
      return platform.callbacks
        .filter((c) => c.verified && c.status < 300 && c.body.conversation?.id === conversation.id)
        .map((c): PlatformOutput => {
          const b = c.body;
          if (b.type === 'reply') return { kind: 'final', text: String(b.text), turnId: b.turnId, reason: b.reason };
          return { kind: b.type === 'notice' ? 'notice' : 'message', text: String(b.text ?? ''), turnId: b.turnId };
        });
    },
    async breakPlatform() {
      platform.failNext(1_000, 503);
      return async () => platform.failNext(0);
    },
    async close() {
      await platform.close();
      await env.close();
    },
  };
}

const harness: ContractHarness = { name: 'webhook', setup: webhookRig };
runChannelContract(harness);
