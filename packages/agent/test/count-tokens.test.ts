import { type FakeAnthropic, startFakeAnthropic, validateCountTokensRequest } from '@switchboard/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AnthropicModelClient, buildMessagesRequest, countTokensRequest, type Message, type ModelRequest, ModelError, type ToolSpec } from '../src/index.js';

const tool = (name: string): ToolSpec => ({
  name,
  description: `the ${name} tool`,
  input_schema: { type: 'object', properties: { path: { type: 'string' } } },
});

const conversation: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'read a' }] },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'file body' }] },
];

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'claude-test',
    // Long enough (above the fake's 1,024-token minimum) that the prefix is cached.
    system: [{ type: 'text', text: `You are a test assistant. ${'Keep answers short. '.repeat(300)}` }],
    messages: conversation,
    tools: [tool('write_file'), tool('read_file')],
    maxTokens: 256,
    ...over,
  };
}

const hasCacheControl = (value: unknown): boolean => JSON.stringify(value).includes('cache_control');

describe('countTokensRequest', () => {
  it('is the streamed body minus stream, max_tokens and every cache_control, and count_tokens accepts it', () => {
    const req = request();
    const before = structuredClone(req);
    const streamed = buildMessagesRequest(req);
    const counted = countTokensRequest(req);
    expect(hasCacheControl(streamed)).toBe(true);
    expect(hasCacheControl(counted)).toBe(false);
    expect(Object.keys(counted).sort()).toEqual(['messages', 'model', 'system', 'tools']);
    // Same tools in the same (sorted) order, same system text, same blocks.
    expect(counted.tools?.map((t) => t.name)).toEqual(['read_file', 'write_file']);
    expect(JSON.stringify(counted.messages)).toBe(JSON.stringify(streamed.messages).replaceAll(',"cache_control":{"type":"ephemeral"}', ''));
    expect(JSON.stringify(counted.system)).toBe(JSON.stringify(streamed.system).replaceAll(',"cache_control":{"type":"ephemeral"}', ''));
    expect(validateCountTokensRequest(counted)).toBeUndefined();
    expect(req).toEqual(before);
  });

  it('sends no tools key when the agent has none', () => {
    expect('tools' in countTokensRequest(request({ tools: [] }))).toBe(false);
  });
});

describe('AnthropicModelClient.countTokens against the fake', () => {
  let fake: FakeAnthropic;
  let client: AnthropicModelClient;
  const signal = () => new AbortController().signal;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    client = new AnthropicModelClient({ apiKey: 'sk-test', baseUrl: fake.url, requestTimeoutMs: 5_000, streamIdleTimeoutMs: 5_000, countTokensTimeoutMs: 200 });
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.setCountTokensHandler(undefined));

  async function streamed(req: ModelRequest) {
    const gen = client.stream(req, signal());
    let step = await gen.next();
    while (!step.done) step = await gen.next();
    return step.value;
  }

  it('answers the tokens the same request is billed as input, cache reads and writes included', async () => {
    const req = request();
    const first = await streamed(req);
    const second = await streamed(req);
    expect(second.usage.cacheReadInputTokens).toBeGreaterThan(0);
    const tokens = await client.countTokens(req, signal());
    for (const usage of [first.usage, second.usage]) {
      expect(usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens).toBe(tokens);
    }
    const wire = fake.countTokensRequests.at(-1)!;
    expect(wire.path).toBe('/v1/messages/count_tokens');
    expect(wire.countedTokens).toBe(tokens);
    expect(wire.body.max_tokens).toBeUndefined();
    expect(wire.body.stream).toBeUndefined();
    expect(hasCacheControl(wire.body)).toBe(false);
    // The count consumed no scripted Messages answer and is not a Messages request.
    expect(fake.requests.filter((r) => r.path === '/v1/messages')).toHaveLength(2);
  });

  it('classifies failures like the other model errors', async () => {
    const cases: Array<[Parameters<FakeAnthropic['setCountTokensHandler']>[0], string]> = [
      [() => ({ error: { status: 429, type: 'rate_limit_error', message: 'slow down' } }), 'rate_limit'],
      [() => ({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }), 'overloaded'],
      [() => ({ error: { status: 500, type: 'api_error', message: 'boom' } }), 'server'],
      [() => ({ error: { status: 401, type: 'authentication_error', message: 'bad key' } }), 'auth'],
      [() => ({ stall: true }), 'stalled'],
    ];
    for (const [handler, kind] of cases) {
      fake.setCountTokensHandler(handler);
      const err = await client.countTokens(request(), signal()).catch((e: unknown) => e);
      expect(err, kind).toBeInstanceOf(ModelError);
      expect((err as ModelError).kind, kind).toBe(kind);
    }
  });

  it('refuses a request the API would refuse (invalid_request) and a body without a valid count', async () => {
    const bad = request({ messages: [{ role: 'assistant', content: [{ type: 'text', text: 'no user first' }] }] });
    expect(((await client.countTokens(bad, signal()).catch((e: unknown) => e)) as ModelError).kind).toBe('invalid_request');
    fake.setCountTokensHandler(() => ({ inputTokens: -3 }));
    expect(((await client.countTokens(request(), signal()).catch((e: unknown) => e)) as ModelError).kind).toBe('server');
  });

  it('stops when the signal aborts', async () => {
    fake.setCountTokensHandler(() => ({ stall: true }));
    const slow = new AnthropicModelClient({
      apiKey: 'sk-test',
      baseUrl: fake.url,
      requestTimeoutMs: 5_000,
      streamIdleTimeoutMs: 5_000,
      countTokensTimeoutMs: 60_000,
    });
    const controller = new AbortController();
    const before = fake.countTokensRequests.length;
    const pending = slow.countTokens(request(), controller.signal).catch((e: unknown) => e);
    await fake.waitForCountTokensRequests(fake.countTokensRequests.length + 1);
    expect(fake.countTokensRequests.length).toBe(before + 1);
    controller.abort(new Error('stop'));
    expect(((await pending) as ModelError).kind).toBe('aborted');
    const already = new AbortController();
    already.abort();
    expect(((await slow.countTokens(request(), already.signal).catch((e: unknown) => e)) as ModelError).kind).toBe('aborted');
  });
});
