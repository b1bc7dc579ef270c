import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANARY_ANTHROPIC_KEY, startFakeAnthropic, type FakeAnthropic } from '../src/index.js';

const KEY = 'sk-test-not-a-canary';
let fake: FakeAnthropic;
let client: Anthropic;
const base = { model: 'claude-test', max_tokens: 256, messages: [{ role: 'user' as const, content: 'hi' }] };

beforeAll(async () => {
  fake = await startFakeAnthropic();
  client = new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 });
});
afterAll(async () => {
  await fake.close();
});

async function failure(p: Promise<unknown>): Promise<APIError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Anthropic.APIError);
  return err as APIError;
}

/** Resolves with the n-th stream event the SDK sees (listener attached before any event can arrive). */
function nthEvent(stream: ReturnType<Anthropic['messages']['stream']>, n: number): Promise<string> {
  let seen = 0;
  return new Promise((resolve) =>
    stream.on('streamEvent', (ev: { type: string }) => {
      if (++seen === n) resolve(ev.type);
    }),
  );
}

describe('fake Anthropic: HTTP error injection', () => {
  it('429 with retry-after and retry-after-ms → RateLimitError with the headers', async () => {
    fake.enqueue({ error: { status: 429, type: 'rate_limit_error', message: 'slow down', headers: { 'retry-after': '7', 'retry-after-ms': '5' } } });
    const err = await failure(client.messages.create(base));
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(err.status).toBe(429);
    expect(err.headers?.get('retry-after')).toBe('7');
    expect(err.headers?.get('retry-after-ms')).toBe('5');
    expect(err.requestID).toMatch(/^req_test_/);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
  });

  it('429 spend limit carries details.error_code and no retry-after', async () => {
    fake.enqueue({ error: { status: 429, type: 'rate_limit_error', message: 'spend limit reached', details: { error_code: 'enforced_spend_limit_reached' } } });
    const err = await failure(client.messages.create(base));
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    expect(err.headers?.get('retry-after')).toBeNull();
    expect(err.error).toMatchObject({ error: { details: { error_code: 'enforced_spend_limit_reached' } } });
  });

  it('529 overloaded and 500 api_error → InternalServerError, also for streaming calls', async () => {
    fake.enqueue(
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded', headers: { 'retry-after': '1' } } },
      { error: { status: 500, type: 'api_error', message: 'Internal server error' } },
    );
    const overloaded = await failure(client.messages.stream(base).finalMessage());
    expect(overloaded).toBeInstanceOf(Anthropic.InternalServerError);
    expect(overloaded.status).toBe(529);
    expect(overloaded.error).toMatchObject({ error: { type: 'overloaded_error' } });
    const internal = await failure(client.messages.create(base));
    expect(internal).toBeInstanceOf(Anthropic.InternalServerError);
    expect(internal.status).toBe(500);
  });

  it('400 prompt too long → BadRequestError with the real message', async () => {
    fake.enqueue({ error: { status: 400, type: 'invalid_request_error', message: 'prompt is too long: 103078 tokens > 102398 maximum' } });
    const err = await failure(client.messages.create(base));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.message).toContain('prompt is too long: 103078 tokens > 102398 maximum');
  });

  it('the SDK retries a scripted 529 when allowed, and X-Stainless-Retry-Count shows it', async () => {
    const retrying = new Anthropic({ apiKey: KEY, baseURL: fake.url, maxRetries: 1 });
    const before = fake.requests.length;
    fake.enqueue({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded', headers: { 'retry-after-ms': '5' } } }, { text: 'second try' });
    const msg = await retrying.messages.create(base);
    expect(msg.content).toEqual([{ type: 'text', text: 'second try' }]);
    expect(fake.requests.slice(before).map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1']);
  });
});

describe('fake Anthropic: stream faults', () => {
  it('a mid-stream error event makes the SDK throw an APIError without status', async () => {
    fake.enqueue({ text: 'Hello world', streamError: { afterEvents: 4, type: 'overloaded_error' } });
    const stream = client.messages.stream(base);
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const err = await failure(stream.finalMessage());
    expect(err.status).toBeUndefined();
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(texts).toEqual(['Hell']);
  });

  it('a non-streaming request with streamError gets the matching HTTP error', async () => {
    fake.enqueue({ streamError: { afterEvents: 1, type: 'overloaded_error' } });
    const err = await failure(client.messages.create(base));
    expect(err.status).toBe(529);
  });

  it('a stalled stream stays open until the client aborts', async () => {
    const before = fake.requests.length;
    fake.enqueue({ text: 'never finished', stallAfterEvents: 1 });
    const ac = new AbortController();
    const stream = client.messages.stream(base, { signal: ac.signal });
    const first = nthEvent(stream, 1);
    await fake.waitForRequests(before + 1);
    expect(await first).toBe('message_start');
    expect(stream.ended).toBe(false);
    ac.abort();
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIUserAbortError);
  });

  it('a body that ends without message_stop: the raw iterator just finishes; the last snapshot is partial', async () => {
    fake.enqueue({ text: 'Hello world', endAfterEvents: 5 }, { text: 'Hello world', endAfterEvents: 5 });
    const raw = await client.messages.create({ ...base, stream: true });
    const types: string[] = [];
    for await (const ev of raw) types.push(ev.type);
    expect(types).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta']);

    // MessageStream (SDK 0.120) keeps the partial snapshot while streaming, but finalMessage()
    // rejects because no message_stop arrived: callers must treat this as truncation.
    const stream = client.messages.stream(base);
    let snapshot: Anthropic.Message | undefined;
    stream.on('streamEvent', (_ev, snap) => (snapshot = structuredClone(snap)));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(String(err)).toContain('stream ended without producing a Message');
    expect(snapshot?.stop_reason).toBeNull();
    expect(snapshot?.content).toEqual([{ type: 'text', text: 'Hello wo' }]);
  });

  it('a destroyed socket mid-stream surfaces as an error', async () => {
    fake.enqueue({ text: 'Hello world', destroyAfterEvents: 4 });
    const err = await client.messages
      .stream(base)
      .finalMessage()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
  });
});

describe('fake Anthropic: hold and release', () => {
  it('hold: true answers nothing until release()', async () => {
    fake.enqueue({ hold: true, text: 'released' });
    let settled = false;
    const call = client.messages.create(base).finally(() => (settled = true));
    await fake.waitForHeld(1);
    expect(fake.held).toBe(1);
    expect(settled).toBe(false);
    fake.release();
    expect((await call).content).toEqual([{ type: 'text', text: 'released' }]);
    expect(fake.held).toBe(0);
  });

  it('holdAfterEvents streams n events, waits for release(), then finishes', async () => {
    fake.enqueue({ holdAfterEvents: 4, text: 'Hello world' });
    const stream = client.messages.stream(base);
    // wire events 1-4 are message_start, content_block_start, ping, delta; the SDK drops the ping
    const third = nthEvent(stream, 3);
    await fake.waitForHeld(1);
    expect(await third).toBe('content_block_delta');
    expect(stream.currentMessage?.content).toEqual([{ type: 'text', text: 'Hell' }]);
    fake.release();
    const msg = await stream.finalMessage();
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello world' }]);
    expect(msg.stop_reason).toBe('end_turn');
  });

  it('release() before the hold point is reached still frees an already-received request', async () => {
    const before = fake.requests.length;
    fake.enqueue({ hold: true, text: 'early release' });
    const call = client.messages.create(base);
    await fake.waitForRequests(before + 1);
    fake.release();
    expect((await call).content).toEqual([{ type: 'text', text: 'early release' }]);
  });

  it('waitForRequests rejects after its timeout', async () => {
    await expect(fake.waitForRequests(fake.requests.length + 1, 200)).rejects.toThrow(/timed out after 200 ms/);
  });
});

describe('fake Anthropic: canary marker', () => {
  it('appends a line (without the key) when the planted key arrives, and only then', async () => {
    const seen = join(mkdtempSync(join(tmpdir(), 'swb-canary-')), 'canary-key-seen');
    const canaryFake = await startFakeAnthropic({ canarySeenPath: seen });
    try {
      const plain = new Anthropic({ apiKey: KEY, baseURL: canaryFake.url, maxRetries: 0 });
      await plain.messages.create(base);
      expect(existsSync(seen)).toBe(false);
      const planted = new Anthropic({ apiKey: CANARY_ANTHROPIC_KEY, baseURL: canaryFake.url, maxRetries: 0 });
      await planted.messages.create(base);
      const lines = readFileSync(seen, 'utf8').trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(canaryFake.requests[1]!.id);
      expect(lines[0]).not.toContain(CANARY_ANTHROPIC_KEY);
    } finally {
      await canaryFake.close();
    }
  });
});
