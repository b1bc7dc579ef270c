import { readFileSync } from 'node:fs';
import Anthropic, { type APIError, type BadRequestError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { echoResponse, runLogPath, startFakeAnthropic, type FakeAnthropic } from '../src/index.js';

const KEY = 'sk-test-not-a-canary';
let fake: FakeAnthropic;
let client: Anthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  client = new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.setHandler(undefined);
});

const base = { model: 'claude-test', max_tokens: 256 } as const;

/** Parses a raw SSE body into [event, data] pairs, asserting the wire format. */
function parseSse(body: string): Array<{ event: string; data: any }> {
  expect(body.endsWith('\n\n')).toBe(true);
  return body
    .slice(0, -2)
    .split('\n\n')
    .map((chunk) => {
      const m = /^event: (\S+)\ndata: (.+)$/.exec(chunk);
      expect(m, chunk).not.toBeNull();
      const data = JSON.parse(m![2]!);
      expect(data.type).toBe(m![1]);
      return { event: m![1]!, data };
    });
}

describe('fake Anthropic: success paths with the real SDK', () => {
  it('streams text; finalMessage() assembles it', async () => {
    fake.enqueue({ text: 'Hello from the fake model' });
    const stream = client.messages.stream({ ...base, messages: [{ role: 'user', content: 'hi' }] });
    const deltas: string[] = [];
    stream.on('text', (t) => deltas.push(t));
    const msg = await stream.finalMessage();
    expect(msg.id).toMatch(/^msg_test_\d+$/);
    expect(msg.stop_reason).toBe('end_turn');
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from the fake model' }]);
    expect(deltas.length).toBe(3);
    expect(deltas.join('')).toBe('Hello from the fake model');
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
  });

  it('streams several tool_use blocks after text; inputs are parsed objects', async () => {
    fake.enqueue({
      text: 'Checking.',
      toolUses: [
        { name: 'get_weather', input: { city: 'SF', days: [1, 2] } },
        { name: 'lookup', input: { q: 'x' }, id: 'toolu_custom' },
      ],
    });
    const msg = await client.messages.stream({ ...base, messages: [{ role: 'user', content: 'weather?' }] }).finalMessage();
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content[0]).toEqual({ type: 'text', text: 'Checking.' });
    const uses = msg.content.filter((b) => b.type === 'tool_use');
    expect(uses).toHaveLength(2);
    expect(uses[0]).toMatchObject({ id: expect.stringMatching(/^toolu_test_\d+$/), name: 'get_weather', input: { city: 'SF', days: [1, 2] } });
    expect(uses[1]).toMatchObject({ id: 'toolu_custom', name: 'lookup', input: { q: 'x' } });
  });

  it('answers non-streaming requests with a JSON Message and a request-id', async () => {
    fake.enqueue({ text: 'plain', stopReason: 'max_tokens' });
    const { data, response, request_id } = await client.messages.create({ ...base, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(request_id).toMatch(/^req_test_\d+$/);
    expect(data).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-test', stop_reason: 'max_tokens', stop_sequence: null });
    expect(data.content).toEqual([{ type: 'text', text: 'plain' }]);
  });

  it('writes the documented SSE sequence on the wire', async () => {
    fake.enqueue({ text: 'Hello world' }, { toolUses: [{ name: 't', input: { a: 'bcdef' } }] });
    const post = (content: string) =>
      fetch(`${fake.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ ...base, stream: true, messages: [{ role: 'user', content }] }),
      });
    const res = await post('a');
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await res.text());
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0]!.data.message).toMatchObject({ content: [], stop_reason: null });
    expect(events.slice(3, 6).map((e) => e.data.delta.text)).toEqual(['Hell', 'o wo', 'rld']);
    expect(events[7]!.data).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: expect.any(Number) } });

    const tool = parseSse(await (await post('b')).text());
    const deltas = tool.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta);
    expect(deltas[0]).toEqual({ type: 'input_json_delta', partial_json: '' });
    expect(deltas.length).toBe(3);
    expect(JSON.parse(deltas.map((d) => d.partial_json).join(''))).toEqual({ a: 'bcdef' });
    expect(tool[1]!.data.content_block).toMatchObject({ type: 'tool_use', name: 't', input: {} });
  });

  it('echoes the last user text by default; setDefault replaces it', async () => {
    const msg = await client.messages.create({
      ...base,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'first' }] },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'ping me' }] },
      ],
    });
    expect(msg.content).toEqual([{ type: 'text', text: 'echo: ping me' }]);
    fake.setDefault(() => ({ text: 'custom default' }));
    const again = await client.messages.create({ ...base, messages: [{ role: 'user', content: 'x' }] });
    expect(again.content).toEqual([{ type: 'text', text: 'custom default' }]);
    fake.setDefault(echoResponse);
  });

  it('lets a handler pick responses by content for concurrent requests, before the queue', async () => {
    fake.enqueue({ text: 'from the queue' });
    fake.setHandler((req) => {
      const last = req.body.messages?.at(-1)?.content;
      if (last === 'alice') return { text: 'hi alice' };
      if (last === 'bob') return { text: 'hi bob' };
      return undefined;
    });
    const ask = (content: string) => client.messages.create({ ...base, messages: [{ role: 'user', content }] });
    const [a, b, c] = await Promise.all([ask('bob'), ask('alice'), ask('carol')]);
    expect(a.content).toEqual([{ type: 'text', text: 'hi bob' }]);
    expect(b.content).toEqual([{ type: 'text', text: 'hi alice' }]);
    expect(c.content).toEqual([{ type: 'text', text: 'from the queue' }]);
    expect(fake.queued).toBe(0);
  });

  it('records requests without the API key and logs them to the run log without it', async () => {
    const before = fake.requests.length;
    await client.messages.create({ ...base, system: 'sys', messages: [{ role: 'user', content: 'record me' }] });
    const [rec] = (await fake.waitForRequests(before + 1)).slice(before);
    expect(rec).toBeDefined();
    expect(rec!.apiKeyMatched).toBe(true);
    expect(rec!.headers['x-api-key']).toBeUndefined();
    expect(rec!.headers.authorization).toBeUndefined();
    expect(rec!.headers['anthropic-version']).toBe('2023-06-01');
    expect(rec!.headers['x-stainless-retry-count']).toBe('0');
    expect(rec!.body).toMatchObject({ model: 'claude-test', system: 'sys', messages: [{ role: 'user', content: 'record me' }] });
    expect(rec!.receivedAt).toBeInstanceOf(Date);
    const line = readFileSync(runLogPath(), 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`[fake-anthropic:${fake.port}] `) && l.includes(`"request":"${rec!.id}"`));
    expect(line).toBeDefined();
    expect(line).toContain('record me');
    expect(line).not.toContain(KEY);
  });
});

describe('fake Anthropic: request validation', () => {
  const toolTurn = [
    { role: 'user', content: 'do it' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'ok' },
        { type: 'tool_use', id: 'toolu_a', name: 't', input: {} },
        { type: 'tool_use', id: 'toolu_b', name: 't', input: {} },
      ],
    },
  ] as Anthropic.MessageParam[];

  async function rejection(messages: Anthropic.MessageParam[]): Promise<BadRequestError> {
    const err: unknown = await client.messages.create({ ...base, messages }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    return err as BadRequestError;
  }

  it('rejects tool_use ids without tool_result blocks at the start of the next message', async () => {
    const err = await rejection([
      ...toolTurn,
      {
        role: 'user',
        content: [
          { type: 'text', text: 'before' },
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'r' },
        ],
      },
    ]);
    expect(err.status).toBe(400);
    expect(err.error).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a, toolu_b. ' +
          'Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
      },
      request_id: expect.stringMatching(/^req_test_/),
    });
    expect(err.requestID).toMatch(/^req_test_/);
    const partial = await rejection([...toolTurn, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a' }] }]);
    expect(partial.message).toContain('immediately after: toolu_b.');
  });

  it('accepts a complete round trip and rejects a tool_result without its tool_use', async () => {
    const ok = await client.messages.create({
      ...base,
      messages: [
        ...toolTurn,
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_b', content: 'b' },
            { type: 'tool_result', tool_use_id: 'toolu_a', content: [{ type: 'text', text: 'a' }] },
            { type: 'text', text: 'go on' },
          ],
        },
      ],
    });
    expect(ok.content).toEqual([{ type: 'text', text: 'echo: go on' }]);
    const err = await rejection([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_zzz', content: 'x' }] }]);
    expect(err.message).toContain('unexpected `tool_use_id` found in `tool_result` blocks: toolu_zzz');
  });

  it('rejects empty text blocks, non-alternating roles and a leading assistant message', async () => {
    const reason = async (messages: Anthropic.MessageParam[]) => ((await rejection(messages)).error as any).error.message as string;
    expect(await reason([{ role: 'user', content: [{ type: 'text', text: '' }] }])).toBe('messages.0.content.0: text content blocks must be non-empty');
    expect(
      await reason([
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ]),
    ).toContain('roles must alternate');
    expect(await reason([{ role: 'assistant', content: 'a' }])).toBe('messages: first message must use the "user" role');
    expect(await reason([{ role: 'user', content: '' }])).toContain('non-empty content');
  });

  it('rejects missing fields and bad tool names', async () => {
    const bad = (body: object) => client.messages.create(body as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(await bad({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).toMatchObject({
      status: 400,
      message: expect.stringContaining('max_tokens: Field required'),
    });
    expect(
      await bad({ ...base, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'mcp.fs.read', input_schema: { type: 'object' } }] }),
    ).toMatchObject({
      status: 400,
      message: expect.stringContaining('tools.0.custom.name'),
    });
  });

  it('answers 401 authentication_error for a wrong key and records apiKeyMatched=false', async () => {
    const strict = await startFakeAnthropic({ apiKey: 'sk-right' });
    try {
      const wrong = new Anthropic({ apiKey: 'sk-wrong', baseURL: strict.url, maxRetries: 0 });
      const err = await wrong.messages.create({ ...base, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((err as APIError).error).toMatchObject({ error: { type: 'authentication_error' } });
      expect(strict.requests[0]!.apiKeyMatched).toBe(false);
      const right = new Anthropic({ apiKey: 'sk-right', baseURL: strict.url, maxRetries: 0 });
      await expect(right.messages.create({ ...base, messages: [{ role: 'user', content: 'x' }] })).resolves.toMatchObject({ type: 'message' });
      expect(strict.requests[1]!.apiKeyMatched).toBe(true);
    } finally {
      await strict.close();
    }
  });
});
