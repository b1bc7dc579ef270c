import type { ConversationRef } from '@switchboard/core';
import { FakeChannelEnv } from '@switchboard/testkit';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenaiChannel } from '../src/openai-channel.js';

const PRINCIPAL = 'p-unit';
const conversation: ConversationRef = { channel: 'openai', account: 'default', id: PRINCIPAL, kind: 'dm' };

let env: FakeChannelEnv;
let channel: OpenaiChannel;

async function setup() {
  env = new FakeChannelEnv();
  channel = new OpenaiChannel({
    account: 'default',
    approvalWaitMs: 60_000,
    pingIntervalMs: 15_000,
    dedupeWindowMs: 60_000,
    maxBodyBytes: 64 * 1024,
    required: false,
  });
  const token = env.addClientToken(PRINCIPAL);
  await channel.start(env.contextFor(channel));
  const url = await env.listen();
  return { ...token, client: new OpenAI({ apiKey: token.secret, baseURL: `${url}/v1`, maxRetries: 0 }) };
}

afterEach(async () => {
  await channel.stop();
  await env.close();
});

/** Resolves once the fake gateway stored the next accepted item. */
const accepted = () => env.waitFor((e) => e.kind === 'accept_ok');

describe('OpenaiChannel', () => {
  it('answers the waiting request with its turn, notices included', async () => {
    const { client } = await setup();
    const pending = client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }] });
    await accepted();
    const turn = env.turnsStarted[0]!;
    await channel.notify(conversation, 'Heads-up: 80% of your budget is used.');
    await env.runTurn(
      channel,
      conversation,
      turn.turnId,
      [
        { type: 'text_delta', text: 'Hello' },
        { type: 'turn_end', state: 'completed', reason: 'completed', text: 'Hello' },
      ],
      {
        clientId: turn.clientId,
        resumed: false,
      },
    );
    const c = (await pending) as OpenAI.ChatCompletion & { switchboard: { notices?: string[]; turn_id: string } };
    expect(c.choices[0]!.message.content).toBe('Hello');
    expect(c.switchboard).toMatchObject({ turn_id: turn.turnId, notices: ['Heads-up: 80% of your budget is used.'] });
  });

  it('ends a waiting request with 401 when its token is revoked', async () => {
    const { client, tokenId } = await setup();
    const pending = client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    await accepted();
    env.emitAccessChange({ type: 'token_revoked', tokenId });
    const err = await pending;
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    // The revoked token no longer gets in at all.
    expect(await client.models.list().catch((e: unknown) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('a stop answers waiting requests with 503 (retry: the resumed turn answers the retry) and reports down', async () => {
    const { client } = await setup();
    const pending = client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    const streaming = client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'streamed' }], stream: true });
    await env.waitFor((e) => e.kind === 'accept_ok' && env.accepted.length === 2);
    const stream = await streaming;
    await channel.stop();
    const err = await pending;
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    await expect(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    ).rejects.toThrow(/shutting down/);
    expect(channel.health().state).toBe('down');
  });

  it('finds a completion only for its own person', async () => {
    const { client } = await setup();
    const other = env.addClientToken('p-other');
    const otherClient = new OpenAI({ apiKey: other.secret, baseURL: `${env.url}/v1`, maxRetries: 0 });
    await env.runTurn(
      channel,
      conversation,
      '7d1c2b9e-0000-4000-8000-000000000001',
      [{ type: 'turn_end', state: 'completed', reason: 'completed', text: 'mine' }],
      {
        clientId: 'c1',
        resumed: false,
      },
    );
    const id = 'chatcmpl-7d1c2b9e-0000-4000-8000-000000000001';
    expect((await client.chat.completions.retrieve(id)).choices[0]!.message.content).toBe('mine');
    expect(await otherClient.chat.completions.retrieve(id).catch((e: unknown) => e)).toBeInstanceOf(OpenAI.NotFoundError);
    expect((await otherClient.chat.completions.list()).data).toEqual([]);
  });
});
