import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WireMessage } from '../src/anthropic-wire.js';
import { startFakeAnthropic, type FakeAnthropic } from '../src/index.js';
import { cutAtMaxTokens } from '../src/max-tokens-cut.js';

const message = (content: WireMessage['content']): WireMessage => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content,
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 99, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
});

describe('cutAtMaxTokens', () => {
  it('leaves a reply that fits unchanged', () => {
    const m = message([{ type: 'text', text: 'abcd' }]);
    expect(cutAtMaxTokens(m, 1)).toEqual({ message: m, partialJson: new Map() });
  });

  it('cuts a tool_use input mid-JSON and drops the blocks after it', () => {
    const input = { content: 'x'.repeat(40) };
    const m = message([
      { type: 'text', text: 'abcd' },
      { type: 'tool_use', id: 't1', name: 'write_file', input },
      { type: 'text', text: 'after' },
    ]);
    const { message: cut, partialJson } = cutAtMaxTokens(m, 5);
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.usage.output_tokens).toBe(5);
    expect(cut.content).toEqual([
      { type: 'text', text: 'abcd' },
      { type: 'tool_use', id: 't1', name: 'write_file', input: {} },
    ]);
    // 5 tokens = 20 characters: 4 went to the text, 16 to the JSON.
    expect(partialJson).toEqual(new Map([[1, JSON.stringify(input).slice(0, 16)]]));
  });

  it('shortens a text block that overruns', () => {
    const { message: cut, partialJson } = cutAtMaxTokens(message([{ type: 'text', text: 'a'.repeat(30) }]), 2);
    expect(cut.content).toEqual([{ type: 'text', text: 'a'.repeat(8) }]);
    expect(cut.stop_reason).toBe('max_tokens');
    expect(partialJson.size).toBe(0);
  });
});

describe('fake Anthropic: cutAtMaxTokens on the wire', () => {
  let fake: FakeAnthropic;
  let client: Anthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    client = new Anthropic({ apiKey: 'k', baseURL: fake.url, maxRetries: 0 });
  });
  afterAll(() => fake.close());

  it('streams a partial input_json_delta and stop_reason max_tokens', async () => {
    const input = { path: 'f', content: 'y'.repeat(100) };
    fake.enqueue({ toolUses: [{ name: 'write_file', input, id: 'toolu_c' }], cutAtMaxTokens: true });
    const stream = await client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true });
    let json = '';
    let stop: string | null = null;
    let outputTokens = 0;
    for await (const ev of stream) {
      if (ev.type === 'content_block_delta' && ev.delta.type === 'input_json_delta') json += ev.delta.partial_json;
      if (ev.type === 'message_delta') {
        stop = ev.delta.stop_reason;
        outputTokens = ev.usage.output_tokens;
      }
    }
    expect(json).toBe(JSON.stringify(input).slice(0, 40));
    expect(() => JSON.parse(json)).toThrow();
    expect(stop).toBe('max_tokens');
    expect(outputTokens).toBe(10);
  });

  it('answers a non-streaming request with input {} and stop_reason max_tokens', async () => {
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { content: 'y'.repeat(100) }, id: 'toolu_d' }], cutAtMaxTokens: true });
    const res = await client.messages.create({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.stop_reason).toBe('max_tokens');
    expect(res.content).toEqual([{ type: 'tool_use', id: 'toolu_d', name: 'write_file', input: {} }]);
  });
});
