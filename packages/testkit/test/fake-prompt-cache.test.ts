import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CACHE_TTL_MS, defaultMinCacheTokens, startFakeAnthropic, type FakeAnthropic, type WireUsage } from '../src/index.js';

const KEY = 'sk-test-not-a-canary';
let clock = 0;
let fake: FakeAnthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic({ now: () => clock, minCacheTokens: { 'claude-tiny': 10 } });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  // A fresh hour per test: nothing an earlier test cached is still alive.
  clock += 10 * CACHE_TTL_MS['1h'];
});

const EPH = { type: 'ephemeral' } as const;
/** About `tokens` tokens of text (4 characters each), distinct per `tag`. */
const filler = (tokens: number, tag: string) => `${tag} `.padEnd(tokens * 4, 'x');

type Body = Record<string, unknown>;

async function post(body: Body): Promise<{ status: number; json: { usage?: WireUsage; error?: { type: string; message: string } } }> {
  const res = await fetch(`${fake.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-test', max_tokens: 64, ...body }),
  });
  return { status: res.status, json: (await res.json()) as never };
}

async function usageOf(body: Body): Promise<WireUsage> {
  const r = await post(body);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.usage!;
}

const text = (t: string, cache?: object) => ({ type: 'text', text: t, ...(cache ? { cache_control: cache } : {}) });
const user = (...content: object[]) => ({ role: 'user', content });
const assistant = (...content: object[]) => ({ role: 'assistant', content });

describe('fake Anthropic: cache_control rules', () => {
  it('refuses a fifth breakpoint with the API message; four are fine', async () => {
    const system = [1, 2, 3, 4].map((i) => text(`part ${i}`, EPH));
    expect((await post({ system, messages: [user(text('hi'))] })).status).toBe(200);
    const five = await post({ system, messages: [user(text('hi', EPH))] });
    expect(five.status).toBe(400);
    expect(five.json.error).toEqual({ type: 'invalid_request_error', message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' });
    const auto = await post({ system, cache_control: EPH, messages: [user(text('hi'))] });
    expect(auto.json.error?.message).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
    // Breakpoints inside a tool_result's content count too.
    const nested = await post({
      system: system.slice(0, 3),
      messages: [
        user(text('go')),
        assistant({ type: 'tool_use', id: 't1', name: 'f', input: {} }),
        user({ type: 'tool_result', tool_use_id: 't1', content: [text('a', EPH)], cache_control: EPH }),
      ],
    });
    expect(nested.json.error?.message).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
  });

  it('refuses a 1-hour breakpoint after a 5-minute one, in tools → system → messages order', async () => {
    const tools = [{ name: 'f', description: 'd', input_schema: { type: 'object' }, cache_control: { ...EPH, ttl: '5m' } }];
    const bad = await post({ tools, system: [text('sys', { ...EPH, ttl: '1h' })], messages: [user(text('hi'))] });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toMatch(
      /^system\.0\.cache_control\.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block/,
    );
    // The default TTL is 5m: a 1h block after an unmarked-TTL one is refused too.
    const implicit = await post({ system: [text('sys', EPH)], messages: [user(text('hi', { ...EPH, ttl: '1h' }))] });
    expect(implicit.json.error?.message).toMatch(/^messages\.0\.content\.0\.cache_control\.ttl: a ttl='1h'/);
    const good = await post({ system: [text('sys', { ...EPH, ttl: '1h' })], messages: [user(text('hi', { ...EPH, ttl: '5m' }))] });
    expect(good.status).toBe(200);
  });

  it('refuses malformed cache_control values and marks on blocks that cannot carry one', async () => {
    const cases: Array<[object, RegExp]> = [
      [{ type: 'persistent' }, /^messages\.0\.content\.0\.cache_control\.type: Input should be 'ephemeral'$/],
      [{ type: 'ephemeral', ttl: '10m' }, /^messages\.0\.content\.0\.cache_control\.ttl: Input should be '5m' or '1h'$/],
      [{ type: 'ephemeral', scope: 'x' }, /cache_control\.scope: Extra inputs are not permitted/],
      ['ephemeral' as unknown as object, /cache_control: Input should be a valid dictionary/],
    ];
    for (const [value, message] of cases) {
      const r = await post({ messages: [user(text('hi', value))] });
      expect(r.status).toBe(400);
      expect(r.json.error?.message).toMatch(message);
    }
    const thinking = await post({
      messages: [user(text('hi')), assistant({ type: 'thinking', thinking: 'hmm', signature: 's', cache_control: EPH }, text('ok')), user(text('go'))],
    });
    expect(thinking.json.error?.message).toBe('messages.1.content.0.thinking.cache_control: Extra inputs are not permitted');
    const top = await post({ cache_control: { type: 'ephemeral', ttl: '2h' }, messages: [user(text('hi'))] });
    expect(top.json.error?.message).toBe("cache_control.ttl: Input should be '5m' or '1h'");
  });
});

describe('fake Anthropic: prompt cache accounting', () => {
  it('writes a prefix at its breakpoint, then reads it back; input_tokens counts only what follows', async () => {
    const body = { system: [text(filler(1500, 'sys-a'), EPH)], messages: [user(text('first question'))] };
    const first = await usageOf(body);
    expect(first.cache_read_input_tokens).toBe(0);
    expect(first.cache_creation_input_tokens).toBeGreaterThanOrEqual(1500);
    expect(first.cache_creation).toEqual({ ephemeral_5m_input_tokens: first.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 });
    const again = await usageOf(body);
    expect(again.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    expect(again.cache_creation_input_tokens).toBe(0);
    // The whole input is the same either way; only its split differs.
    const total = (u: WireUsage) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
    expect(total(again)).toBe(total(first));
    expect(again.input_tokens).toBeLessThan(50);
    // A change inside the prefix is a miss; a change after it is not.
    expect((await usageOf({ ...body, system: [text(filler(1500, 'sys-b'), EPH)] })).cache_read_input_tokens).toBe(0);
    expect((await usageOf({ ...body, messages: [user(text('another question'))] })).cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    // Moving the breakpoint mark itself does not change the prefix's hash.
    expect((await usageOf({ ...body, cache_control: EPH })).cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
  });

  it('a rolling breakpoint on the last message reads the previous request’s messages', async () => {
    const system = [text(filler(1200, 'roll'), EPH)];
    const turn1 = [user(text('one', EPH))];
    const u1 = await usageOf({ system, messages: turn1 });
    const turn2 = [user(text('one')), assistant(text('answer one')), user(text('two', EPH))];
    const u2 = await usageOf({ system, messages: turn2 });
    expect(u2.cache_read_input_tokens).toBe(u1.cache_creation_input_tokens);
    expect(u2.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(u2.cache_creation_input_tokens).toBeLessThan(60);
  });

  it('looks back at most 20 positions from a breakpoint', async () => {
    const system = [text(filler(1200, 'look'), EPH)];
    const history = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? user(text(`u${i}`)) : assistant(text(`a${i}`))));
    const withMark = (msgs: Array<{ role: string; content: object[] }>) =>
      msgs.map((m, i) => (i === msgs.length - 1 ? { ...m, content: [{ ...m.content[0], cache_control: EPH }] } : m));
    const base = history(5);
    const u0 = await usageOf({ system, messages: withMark(base) });
    const prefixAndBase = u0.cache_creation_input_tokens;
    // 19 more blocks: the old breakpoint is the 20th position back, still found.
    const near = await usageOf({ system, messages: withMark(history(24)) });
    expect(near.cache_read_input_tokens).toBe(prefixAndBase);
    // From a fresh base, 20 more blocks: the old breakpoint is 21 positions back; only the system prefix is read.
    clock += 2 * CACHE_TTL_MS['1h'];
    const sysOnly = (await usageOf({ system, messages: [user(text('warm'))] })).cache_creation_input_tokens;
    const u1 = await usageOf({ system, messages: withMark(base) });
    expect(u1.cache_read_input_tokens).toBe(sysOnly);
    const far = await usageOf({ system, messages: withMark(history(25)) });
    expect(far.cache_read_input_tokens).toBe(sysOnly);
    expect(far.cache_creation_input_tokens).toBeGreaterThan(0);
  });

  it('caches nothing below the model’s minimum prefix; the minimum is per model and configurable', async () => {
    expect(defaultMinCacheTokens('claude-sonnet-4-5')).toBe(1024);
    expect(defaultMinCacheTokens('claude-haiku-4-5-20251001')).toBe(4096);
    expect(defaultMinCacheTokens('claude-opus-4-5')).toBe(4096);
    const small = { system: [text(filler(900, 'small'), EPH)], messages: [user(text('hi'))] };
    for (let i = 0; i < 2; i++) {
      const u = await usageOf(small);
      expect(u).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    }
    const mid = { system: [text(filler(2000, 'mid'), EPH)], messages: [user(text('hi'))] };
    expect((await usageOf({ ...mid, model: 'claude-haiku-4-5' })).cache_creation_input_tokens).toBe(0);
    expect((await usageOf({ ...mid, model: 'claude-sonnet-4-5' })).cache_creation_input_tokens).toBeGreaterThan(2000);
    // A different model never reads another model's entries.
    expect((await usageOf({ ...mid, model: 'claude-sonnet-4-5' })).cache_read_input_tokens).toBeGreaterThan(2000);
    expect((await usageOf({ ...mid, model: 'claude-sonnet-4' })).cache_read_input_tokens).toBe(0);
    // The option lowers the minimum for one model.
    const tiny = { model: 'claude-tiny', system: [text('a short system prompt', EPH)], messages: [user(text('hi'))] };
    await usageOf(tiny);
    expect((await usageOf(tiny)).cache_read_input_tokens).toBeGreaterThan(0);
  });

  it('entries expire after their TTL; a read refreshes them; 1-hour writes are reported apart', async () => {
    const body = { system: [text(filler(1200, 'ttl'), EPH)], messages: [user(text('hi'))] };
    await usageOf(body);
    clock += CACHE_TTL_MS['5m'] - 1;
    expect((await usageOf(body)).cache_read_input_tokens).toBeGreaterThan(0);
    clock += CACHE_TTL_MS['5m'] - 1; // refreshed by the read: still alive
    expect((await usageOf(body)).cache_read_input_tokens).toBeGreaterThan(0);
    clock += CACHE_TTL_MS['5m'];
    expect((await usageOf(body)).cache_read_input_tokens).toBe(0);

    const long = { system: [text(filler(1200, 'long'), { ...EPH, ttl: '1h' })], messages: [user(text('more text here', EPH))] };
    const w = await usageOf(long);
    expect(w.cache_creation!.ephemeral_1h_input_tokens).toBeGreaterThan(1200);
    expect(w.cache_creation!.ephemeral_5m_input_tokens).toBeGreaterThan(0);
    expect(w.cache_creation_input_tokens).toBe(w.cache_creation!.ephemeral_1h_input_tokens + w.cache_creation!.ephemeral_5m_input_tokens);
    clock += CACHE_TTL_MS['5m'] + 1;
    const later = await usageOf(long);
    expect(later.cache_read_input_tokens).toBe(w.cache_creation!.ephemeral_1h_input_tokens);
    expect(later.cache_creation!.ephemeral_5m_input_tokens).toBe(w.cache_creation!.ephemeral_5m_input_tokens);
  });

  it('an error answer writes nothing; the usage is on message_start and message_delta of a stream', async () => {
    const body = { system: [text(filler(1200, 'err'), EPH)], messages: [user(text('hi'))] };
    fake.enqueue({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } });
    expect((await post(body)).status).toBe(529);
    expect(fake.requests.at(-1)!.usage).toBeUndefined();
    fake.enqueue({ streamError: { afterEvents: 0, type: 'overloaded_error' } }); // non-streaming: an HTTP 529
    expect((await post(body)).status).toBe(529);
    expect(fake.requests.at(-1)!.usage).toBeUndefined();
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-test', max_tokens: 64, stream: true, ...body }),
    });
    const events = (await res.text())
      .trim()
      .split('\n\n')
      .map((chunk) => JSON.parse(chunk.split('\n')[1]!.slice('data: '.length)) as { type: string; message?: { usage: WireUsage }; usage?: WireUsage });
    const start = events.find((e) => e.type === 'message_start')!.message!.usage;
    const delta = events.find((e) => e.type === 'message_delta')!.usage!;
    expect(start.cache_read_input_tokens).toBe(0);
    expect(start.cache_creation_input_tokens).toBeGreaterThan(1200);
    expect(delta).toEqual({
      input_tokens: start.input_tokens,
      cache_creation_input_tokens: start.cache_creation_input_tokens,
      cache_read_input_tokens: 0,
      output_tokens: expect.any(Number),
    });
    expect(fake.requests.at(-1)!.usage).toMatchObject({ cache_creation_input_tokens: start.cache_creation_input_tokens });
    expect((await usageOf(body)).cache_read_input_tokens).toBe(start.cache_creation_input_tokens);
  });
});
