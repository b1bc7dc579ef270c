import { api, runCli } from '@switchboard/testkit';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { type ToolResultBlock, toolResultFor, useGateway } from './helpers.js';

// Issue 18, acceptance 2: the official `openai` client (v6) against the gateway's OpenAI-compatible
// endpoint, the testkit's fake Anthropic API as the model.

const SHORT_WAIT_MS = 300;
const env = useGateway({
  config: {
    // approvalWait (60 s by default) + limits.modelRequestTimeout must stay below connectionTimeout.
    gateway: { connectionTimeout: '5m' },
    agents: { default: { systemPrompt: 'You are a test assistant.' }, helper: { systemPrompt: 'You help.' } },
    budgets: { roles: { member: { day: { tokens: 1 } } } },
    channels: {
      openai: { accounts: { default: { rateLimit: { burst: 100, perMinute: 600 } }, short: { approvalWait: SHORT_WAIT_MS }, ping: { pingInterval: 200 } } },
    },
  },
});

/** Every response body the clients of this file received, for the canary check. */
const bodies: string[] = [];
const recordingFetch: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  void res
    .clone()
    .text()
    .then((t) => bodies.push(t))
    .catch(() => undefined);
  return res;
};

function client(token: string, path = '/v1', opts: { maxRetries?: number } = {}): OpenAI {
  return new OpenAI({ apiKey: token, baseURL: `${env.gw.url}${path}`, maxRetries: opts.maxRetries ?? 0, timeout: 30_000, fetch: recordingFetch });
}

const owner = () => client(env.gw.credentials().clientToken);
const user = (content: string) => [{ role: 'user' as const, content }];
const modelCalls = () => env.fake.requests.filter((r) => r.path === '/v1/messages').length;

/** The text of every message the model was sent in its latest request. */
function lastRequestText(): string {
  const body = env.fake.requests.at(-1)!.body as { messages: Array<{ content: string | Array<{ type: string; text?: string }> }> };
  return body.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((b) => b.text ?? '').join(' '))).join('\n');
}

/** The approval the gateway logs as waiting for an OpenAI request (the event the test waits on). */
async function waitingApproval(after: number): Promise<string> {
  const line = await env.gw.waitForLog((l) => l.includes('openai: a request waits for an approval') && env.gw.logs().indexOf(l) >= after, 20_000);
  return (JSON.parse(line) as { approvalId: string }).approvalId;
}

describe('the OpenAI-compatible endpoint (issue 18, acceptance 2)', () => {
  it('lists the agents as models; an unknown model is 404 model_not_found', async () => {
    const models = await owner().models.list();
    expect(models.data.map((m) => m.id)).toEqual(['default', 'helper']);
    const err = await owner()
      .chat.completions.create({ model: 'nope', messages: user('hi') })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');
  });

  it('answers a non-streamed completion', async () => {
    const c = await owner().chat.completions.create({ model: 'default', messages: user('plain question') });
    expect(c.object).toBe('chat.completion');
    expect(c.choices[0]!.message.content).toContain('echo:');
    expect(c.choices[0]!.message.content).toContain('plain question');
    expect(c.choices[0]!.finish_reason).toBe('stop');
    expect(c.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('streams a completion over SSE (the SDK helper accepts the chunks as a whole completion)', async () => {
    const stream = await owner().chat.completions.create({
      model: 'helper',
      messages: user('streamed question'),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage.total_tokens;
    }
    expect(text).toContain('streamed question');
    expect(finish).toBe('stop');
    expect(usage).toBeGreaterThan(0);
    const final = await owner()
      .chat.completions.stream({ model: 'default', messages: user('helper stream') })
      .finalChatCompletion();
    expect(final.choices[0]!.message.content).toContain('helper stream');
  });

  it('sends `: ping` comments on a stream while its turn runs', async () => {
    const { fake, gw } = env;
    fake.enqueue({ text: 'after the pings', hold: true });
    const res = await client(gw.credentials().clientToken, '/channels/openai/ping/v1')
      .chat.completions.create({ model: 'default', messages: user('slow one'), stream: true })
      .asResponse();
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let raw = '';
    while (!raw.includes(': ping\n\n')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before a ping: ${raw}`);
      raw += decoder.decode(value, { stream: true });
    }
    // The model has not answered yet: only the opening chunk came before the ping.
    expect(raw).not.toContain('after the pings');
    fake.release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
    }
    const deltas = [...raw.matchAll(/^data: (\{.*\})$/gm)].map((m) => (JSON.parse(m[1]!) as OpenAI.ChatCompletionChunk).choices[0]?.delta.content ?? '');
    expect(deltas.join('')).toBe('after the pings');
    expect(raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('continues a session named by X-Switchboard-Session; without it, the default session does not see it', async () => {
    const headers = { 'X-Switchboard-Session': 'project-1' };
    await owner().chat.completions.create({ model: 'default', messages: user('remember the word kumquat') }, { headers });
    // The client sends only its new message (and even stale history): the server-side session is the history.
    const next = await owner().chat.completions.create(
      { model: 'default', messages: [{ role: 'system', content: 'ignored' }, { role: 'assistant', content: 'ignored too' }, ...user('what was the word?')] },
      { headers },
    );
    expect(next.choices[0]!.message.content).toContain('what was the word?');
    expect(lastRequestText()).toContain('remember the word kumquat');
    expect(lastRequestText()).not.toContain('ignored too');
    await owner().chat.completions.create({ model: 'default', messages: user('fresh start') });
    expect(lastRequestText()).not.toContain('kumquat');
    const bad = await owner()
      .chat.completions.create({ model: 'default', messages: user('x') }, { headers: { 'X-Switchboard-Session': '../etc' } })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('answers a retried request (same Idempotency-Key) once: the model sees one turn', async () => {
    const before = modelCalls();
    const headers = { 'Idempotency-Key': 'retry-me-1' };
    const body = { model: 'default', messages: user('do this once') };
    const [a, b] = await Promise.all([owner().chat.completions.create(body, { headers }), owner().chat.completions.create(body, { headers })]);
    const c = await owner().chat.completions.create(body, { headers });
    expect(modelCalls() - before).toBe(1);
    expect(b.id).toBe(a.id);
    expect(c.id).toBe(a.id);
    expect(c.choices[0]!.message.content).toBe(a.choices[0]!.message.content);
    // The same key for another message is the client's mistake, not a retry.
    const reused = await owner()
      .chat.completions.create({ model: 'default', messages: user('something else') }, { headers })
      .catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });

  it('a tool call that asks is approved from the control API within approvalWait', async () => {
    const { fake, gw } = env;
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'openai-approved.txt', content: 'yes' }, id: 'toolu_oa1' }] }, { text: 'Written.' });
    const from = gw.logs().length;
    const pending = owner().chat.completions.create({ model: 'default', messages: user('write the file') });
    const approvalId = await waitingApproval(from);
    const decided = await api(gw, 'POST', `/api/v1/approvals/${approvalId}/decision`, { token: gw.credentials().operatorToken, body: { decision: 'allow' } });
    expect(decided.status).toBe(200);
    const c = await pending;
    expect(c.choices[0]!.message.content).toBe('Written.');
    expect(toolResultFor(fake, 'toolu_oa1').is_error).toBeFalsy();
  });

  it('a tool call nobody approves within approvalWait becomes a denial with a clear note', async () => {
    const { fake, gw } = env;
    fake.enqueue({ toolUses: [{ name: 'write_file', input: { path: 'openai-late.txt', content: 'no' }, id: 'toolu_oa2' }] }, { text: 'I could not write it.' });
    const c = await client(gw.credentials().clientToken, '/channels/openai/short/v1').chat.completions.create({
      model: 'default',
      messages: user('write late'),
    });
    expect(c.choices[0]!.message.content).toBe('I could not write it.');
    const result: ToolResultBlock = toolResultFor(fake, 'toolu_oa2');
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('channels.openai.accounts.short.approvalWait');
    expect(result.content).toContain('300 ms');
    const approvals = await api(gw, 'GET', '/api/v1/approvals?status=expired', { token: gw.credentials().operatorToken });
    expect(JSON.stringify(approvals.json)).toContain('openai-late.txt');
  });

  it("a member's budget refusal is a 429 insufficient_quota the client raises as RateLimitError (not retried)", async () => {
    const { gw } = env;
    const r = JSON.parse((await runCli(['token', 'create', '--kind', 'client', '--principal', 'mia', '--role', 'member'], { gateway: gw })).stdout) as {
      secret: string;
    };
    // Default retries on: the refusal says not to retry, so the client raises it at once.
    const mia = client(r.secret, '/v1', { maxRetries: 2 });
    const first = await mia.chat.completions.create({ model: 'default', messages: user('first, within budget') });
    expect(first.choices[0]!.message.content).toContain('first, within budget');
    const before = modelCalls();
    const err = await mia.chat.completions.create({ model: 'default', messages: user('second, over budget') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.status).toBe(429);
    expect(e.code).toBe('insufficient_quota');
    expect(e.message).toMatch(/not answered/);
    expect(modelCalls()).toBe(before);
  });

  it('refuses an operator token (and a wrong one) with 401', async () => {
    const { gw } = env;
    for (const token of [gw.credentials().operatorToken, 'swb_c_not-a-real-token']) {
      const err = await client(token)
        .models.list()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((err as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    }
  });

  it('refuses bad bodies with 400 naming the field, and oversized ones with 413', async () => {
    const { gw } = env;
    const post = (body: string, headers: Record<string, string> = {}) =>
      api(gw, 'POST', '/v1/chat/completions', { token: gw.credentials().clientToken, body, headers: { 'content-type': 'application/json', ...headers } });
    const noMessages = await post(JSON.stringify({ model: 'default' }));
    expect(noMessages.status).toBe(400);
    expect(noMessages.json.error).toMatchObject({ type: 'invalid_request_error', param: 'messages' });
    const assistantLast = await post(JSON.stringify({ model: 'default', messages: [{ role: 'assistant', content: 'x' }] }));
    expect(assistantLast.json.error.param).toBe('messages[0].role');
    expect((await post('{not json')).status).toBe(400);
    const huge = await post(JSON.stringify({ model: 'default', messages: user('x'.repeat(2 * 1024 * 1024)) }));
    expect(huge.status).toBe(413);
    expect(huge.json.error.code).toBe('request_too_large');
  });

  it('no client or operator token appears in any response or log line', async () => {
    const { gw } = env;
    await new Promise<void>((r) => setImmediate(r));
    const secrets = [gw.credentials().clientToken, gw.credentials().operatorToken, 'swb_c_not-a-real-token'];
    const logs = gw.logs().join('\n');
    const answers = bodies.join('\n');
    expect(bodies.length).toBeGreaterThan(10);
    for (const s of secrets) {
      expect(logs.includes(s)).toBe(false);
      expect(answers.includes(s)).toBe(false);
    }
  });

  it('a request whose gateway is killed mid-turn is answered once by its retry after the restart', async () => {
    const { fake } = env;
    fake.enqueue({ text: 'answer after the crash', hold: true });
    const before = fake.requests.length;
    const headers = { 'Idempotency-Key': 'crash-1' };
    const body = { model: 'default', messages: user('survive a crash') };
    const first = owner()
      .chat.completions.create(body, { headers })
      .catch((e: unknown) => e);
    await fake.waitForRequests(before + 1);
    await env.gw.kill('SIGKILL');
    expect(await first).toBeInstanceOf(OpenAI.APIConnectionError);
    fake.release();
    env.gw = await env.gw.restart();
    // The turn resumes at start-up; the retry joins it, or finds its recorded answer.
    const retried = await owner().chat.completions.create(body, { headers });
    expect(retried.choices[0]!.message.content).toContain('survive a crash');
    const again = await owner().chat.completions.create(body, { headers });
    expect(again.id).toBe(retried.id);
    const stored = [];
    for await (const c of owner().chat.completions.list({ limit: 100 })) if (c.id === retried.id) stored.push(c);
    expect(stored).toHaveLength(1);
  });

  // Last: it locks the test's address out of the whole gateway.
  it('wrong tokens lock the address out, as on the control API and WebSocket (one shared limiter)', async () => {
    const { gw } = env;
    let err: unknown;
    for (let i = 0; i < 20 && !(err instanceof OpenAI.RateLimitError); i++) {
      err = await client(`swb_c_wrong-${i}`)
        .models.list()
        .catch((e: unknown) => e);
    }
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('too_many_failed_attempts');
    // Even the right client token is refused while the address is locked out.
    const right = await owner()
      .models.list()
      .catch((e: unknown) => e);
    expect(right).toBeInstanceOf(OpenAI.RateLimitError);
    expect((await api(gw, 'GET', '/api/v1/approvals', { token: gw.credentials().operatorToken })).status).toBe(429);
  });
});
