import { randomUUID } from 'node:crypto';
import type { ConversationRef } from '@switchboard/core';
import { type ContractHarness, type ContractRig, FakeChannelEnv, type PlatformOutput, runChannelContract } from '@switchboard/testkit';
import OpenAI from 'openai';
import { idempotentDedupeKey } from '../src/headers.js';
import { OpenaiChannel } from '../src/openai-channel.js';

const PRINCIPAL = 'p-contract';

/** What a listed completion carries beside OpenAI's fields. */
type Listed = OpenAI.ChatCompletion & { switchboard?: { turn_id: string; reason: string; error?: { message: string } } };

/** The OpenAI channel on a real Fastify server; the official `openai` client is the platform side. */
async function openaiRig(): Promise<ContractRig> {
  const env = new FakeChannelEnv();
  const channel = new OpenaiChannel({
    account: 'default',
    approvalWaitMs: 60_000,
    pingIntervalMs: 15_000,
    dedupeWindowMs: 60_000,
    maxBodyBytes: 64 * 1024,
    required: false,
  });
  const { secret, tokenId } = env.addClientToken(PRINCIPAL);
  const conversation: ConversationRef = { channel: 'openai', account: 'default', id: PRINCIPAL, kind: 'dm' };
  let client: OpenAI | null = null;
  const live = () => {
    if (!client) throw new Error('not started');
    return client;
  };
  /** Streams still open (the fake gateway runs no turns: their answers never come). */
  const open: AbortController[] = [];
  /**
   * Sends the request until the gateway takes it: a streaming request is acknowledged by its
   * `200 text/event-stream` headers, sent once the item is stored (a refusal is an error status).
   */
  const deliver = async (key: string, text: string) => {
    const dedupeKey = idempotentDedupeKey(tokenId, key);
    for (let attempt = 0; attempt < 10; attempt++) {
      const abort = new AbortController();
      try {
        await live().chat.completions.create(
          { model: 'default', messages: [{ role: 'user', content: text }], stream: true },
          { headers: { 'Idempotency-Key': key }, signal: abort.signal },
        );
        open.push(abort);
        env.mark('ack', dedupeKey);
        return;
      } catch (err) {
        if (!(err instanceof OpenAI.APIError)) throw err;
        env.mark('nack', dedupeKey, String(err.status));
      }
    }
    throw new Error(`request ${key} was never taken`);
  };
  return {
    env,
    channel,
    conversation,
    steered: 'final-frame',
    async start() {
      await channel.start(env.contextFor(channel));
      const url = await env.listen();
      client = new OpenAI({ apiKey: secret, baseURL: `${url}/v1`, maxRetries: 0, timeout: 10_000 });
    },
    async inject(text) {
      const key = randomUUID();
      await deliver(key, text);
      return { dedupeKey: idempotentDedupeKey(tokenId, key), text, handle: key };
    },
    async redeliver(item) {
      await deliver(item.handle as string, item.text);
    },
    async output() {
      // What the client can see of its answers: the stored completions (GET /v1/chat/completions).
      const out: PlatformOutput[] = [];
      for await (const c of live().chat.completions.list({ limit: 100 })) {
        const l = c as Listed;
        const sb = l.switchboard;
        out.push({
          kind: sb?.error ? 'error' : 'final',
          text: l.choices[0]?.message.content ?? '',
          ...(sb ? { turnId: sb.turn_id, reason: sb.reason } : {}),
          id: l.id,
        });
      }
      return out;
    },
    async breakPlatform() {
      // The platform failing, for an HTTP API: the client's requests die under the channel.
      for (const a of open.splice(0)) a.abort();
      return async () => undefined;
    },
    async close() {
      for (const a of open.splice(0)) a.abort();
      await env.close();
    },
  };
}

const harness: ContractHarness = { name: 'openai', setup: openaiRig };
runChannelContract(harness);
