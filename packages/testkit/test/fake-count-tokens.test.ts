import Anthropic, { type BadRequestError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAnthropic, requestTokens, startFakeAnthropic } from '../src/index.js';

let fake: FakeAnthropic;
let client: Anthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  client = new Anthropic({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
});
afterAll(() => fake.close());
beforeEach(() => fake.setCountTokensHandler(undefined));

const messages: Anthropic.MessageParam[] = [{ role: 'user', content: [{ type: 'text', text: 'How many tokens is this?' }] }];
const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: 'You count.' }];

/** POSTs a raw count_tokens body; answers status and parsed JSON. */
async function rawCount(body: unknown): Promise<{ status: number; json: { input_tokens?: number; error?: { type: string; message: string } } }> {
  const res = await fetch(`${fake.url}/v1/messages/count_tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as never };
}

describe('fake Anthropic: POST /v1/messages/count_tokens', () => {
  it('counts like the usage of the same prompt, records the request and consumes no Messages answer', async () => {
    fake.enqueue({ text: 'scripted for the Messages call' });
    const counted = await client.messages.countTokens({ model: 'claude-test', system, messages });
    expect(counted.input_tokens).toBe(requestTokens({ system, messages }));
    const rec = fake.countTokensRequests.at(-1)!;
    expect(rec.countedTokens).toBe(counted.input_tokens);
    expect(rec.body.messages).toEqual(messages);
    expect(fake.queued).toBe(1);
    // The Messages call with the same prompt (and a breakpoint, which counts nothing) is billed the same input.
    const marked = [{ ...system[0]!, cache_control: { type: 'ephemeral' as const } }];
    const msg = await client.messages.create({ model: 'claude-test', max_tokens: 64, system: marked, messages });
    expect(msg.content).toEqual([{ type: 'text', text: 'scripted for the Messages call' }]);
    expect(msg.usage.input_tokens + (msg.usage.cache_read_input_tokens ?? 0) + (msg.usage.cache_creation_input_tokens ?? 0)).toBe(counted.input_tokens);
  });

  it('refuses unknown fields and missing model or messages as the API does, and validates the messages', async () => {
    const cases: Array<[unknown, string]> = [
      [{ model: 'claude-test', max_tokens: 10, messages }, 'max_tokens: Extra inputs are not permitted'],
      [{ model: 'claude-test', stream: true, messages }, 'stream: Extra inputs are not permitted'],
      [{ messages }, 'model: Field required'],
      [{ model: 'claude-test' }, 'messages: Field required'],
      [{ model: 'claude-test', messages: [{ role: 'assistant', content: 'hi' }] }, 'messages: first message must use the "user" role'],
    ];
    const before = fake.countTokensRequests.length;
    for (const [body, message] of cases) {
      const { status, json } = await rawCount(body);
      expect(status, message).toBe(400);
      expect(json.error).toEqual({ type: 'invalid_request_error', message });
    }
    expect(fake.countTokensRequests.length).toBe(before + cases.length);
    expect(fake.countTokensRequests.slice(before).every((r) => r.countedTokens === undefined)).toBe(true);
    const ok = await rawCount({ model: 'claude-test', messages, tool_choice: { type: 'auto' }, tools: [] });
    expect(ok.status).toBe(200);
  });

  it('can be scripted: a count, an HTTP error, a stall until the client goes away', async () => {
    fake.setCountTokensHandler(() => ({ inputTokens: 4242 }));
    expect((await client.messages.countTokens({ model: 'claude-test', messages })).input_tokens).toBe(4242);
    fake.setCountTokensHandler(() => ({ error: { status: 500, type: 'api_error', message: 'counting broke' } }));
    const err = await client.messages.countTokens({ model: 'claude-test', messages }).catch((e: unknown) => e);
    expect((err as BadRequestError).status).toBe(500);
    fake.setCountTokensHandler(() => ({ stall: true }));
    const controller = new AbortController();
    const stalled = client.messages.countTokens({ model: 'claude-test', messages }, { signal: controller.signal }).catch((e: unknown) => e);
    await fake.waitForCountTokensRequests(fake.countTokensRequests.length + 1);
    controller.abort();
    expect(await stalled).toBeInstanceOf(Anthropic.APIUserAbortError);
    // The handler is consulted only for valid requests: a bad one is still a 400.
    expect((await rawCount({ model: 'claude-test' })).status).toBe(400);
  });
});
