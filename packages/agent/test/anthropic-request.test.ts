import { checkCacheControl, startFakeAnthropic, validateMessagesRequest } from '@switchboard/testkit';
import { describe, expect, it } from 'vitest';
import { AnthropicModelClient, buildMessagesRequest, CACHE_BREAKPOINT, type Message, type ModelRequest, type ToolSpec } from '../src/index.js';

const tool = (name: string): ToolSpec => ({
  name,
  description: `the ${name} tool`,
  input_schema: { type: 'object', properties: { path: { type: 'string' } } },
});

function request(over: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'claude-test',
    system: [{ type: 'text', text: 'You are a test assistant.' }],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    tools: [tool('write_file'), tool('read_file'), tool('list_files')],
    maxTokens: 256,
    ...over,
  };
}

/** The field paths of every block carrying cache_control. */
function marks(body: ReturnType<typeof buildMessagesRequest>): string[] {
  const out: string[] = [];
  for (const [i, t] of (body.tools ?? []).entries()) if ('cache_control' in t && t.cache_control) out.push(`tools.${i}`);
  for (const [i, b] of (Array.isArray(body.system) ? body.system : []).entries()) if (b.cache_control) out.push(`system.${i}`);
  for (const [i, m] of body.messages.entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, b] of m.content.entries()) if ('cache_control' in b && b.cache_control) out.push(`messages.${i}.content.${j}`);
  }
  return out;
}

/** The serialized stable prefix (tools and system) of a body. */
const prefixBytes = (body: ReturnType<typeof buildMessagesRequest>) => JSON.stringify([body.tools, body.system]);

describe('buildMessagesRequest', () => {
  it('marks the end of the stable prefix and the last message block, sorts tools by name, and passes the fake’s rules', () => {
    const body = buildMessagesRequest(request());
    expect(body.tools?.map((t) => t.name)).toEqual(['list_files', 'read_file', 'write_file']);
    expect(marks(body)).toEqual(['system.0', 'messages.0.content.0']);
    expect((body.system as Array<{ cache_control?: unknown }>)[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(body).toMatchObject({ model: 'claude-test', max_tokens: 256, stream: true });
    expect(validateMessagesRequest(body)).toBeUndefined();
    expect(checkCacheControl(body as unknown as Record<string, unknown>)).toBeUndefined();
  });

  it('keeps the prefix byte-stable between calls whatever order the tools come in, and moves only the rolling breakpoint', () => {
    const first = buildMessagesRequest(request());
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'file body' }] },
    ];
    const second = buildMessagesRequest(request({ messages, tools: [tool('read_file'), tool('list_files'), tool('write_file')] }));
    expect(prefixBytes(second)).toBe(prefixBytes(first));
    expect(marks(second)).toEqual(['system.0', 'messages.2.content.0']);
    // The earlier messages are sent as they were, without a mark.
    expect(second.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'hello' }] });
    expect(second.messages[2]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'file body', cache_control: CACHE_BREAKPOINT }]);
  });

  it('never changes the request it was given', () => {
    const req = request();
    const before = structuredClone(req);
    buildMessagesRequest(req);
    buildMessagesRequest(req);
    expect(req).toEqual(before);
    expect(req.tools.map((t) => t.name)).toEqual(['write_file', 'read_file', 'list_files']);
  });

  it('marks the last tool when there is no system prompt, and skips blank text blocks', () => {
    const body = buildMessagesRequest(
      request({
        system: [{ type: 'text', text: '   ' }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'question' },
              { type: 'text', text: ' ' },
            ],
          },
        ],
      }),
    );
    expect(marks(body)).toEqual(['tools.2', 'messages.0.content.0']);
    expect(buildMessagesRequest(request({ system: [], tools: [] })).tools).toBeUndefined();
    expect(marks(buildMessagesRequest(request({ system: [], tools: [] })))).toEqual(['messages.0.content.0']);
  });
});

describe('AnthropicModelClient with prompt caching (against the testkit fake)', () => {
  it('sends breakpoints the fake accepts and reports its cache reads on the next call', async () => {
    const fake = await startFakeAnthropic();
    try {
      const client = new AnthropicModelClient({ apiKey: 'sk-test-not-a-canary', baseUrl: fake.url, requestTimeoutMs: 5000, streamIdleTimeoutMs: 5000 });
      const system = [{ type: 'text' as const, text: 'Be precise. '.repeat(500) }];
      const call = async (messages: Message[]) => {
        const stream = client.stream(request({ system, messages }), new AbortController().signal);
        for (;;) {
          const step = await stream.next();
          if (step.done) return step.value;
        }
      };
      const one = await call([{ role: 'user', content: [{ type: 'text', text: 'first' }] }]);
      expect(one.usage.cacheReadInputTokens).toBe(0);
      expect(one.usage.cacheCreationInputTokens).toBeGreaterThan(1024);
      const two = await call([
        { role: 'user', content: [{ type: 'text', text: 'first' }] },
        one.message,
        { role: 'user', content: [{ type: 'text', text: 'second' }] },
      ]);
      expect(two.usage.cacheReadInputTokens).toBe(one.usage.cacheCreationInputTokens);
      expect(two.usage).toEqual({
        inputTokens: fake.requests[1]!.usage!.input_tokens,
        outputTokens: fake.requests[1]!.usage!.output_tokens,
        cacheCreationInputTokens: fake.requests[1]!.usage!.cache_creation_input_tokens,
        cacheReadInputTokens: fake.requests[1]!.usage!.cache_read_input_tokens,
      });
    } finally {
      await fake.close();
    }
  });
});
