import type { AnyTool, ModelClient, ModelRequest, ModelResponse, ToolContext } from '@switchboard/agent';
import type { Channel, InboundMessage, TurnPolicy } from '@switchboard/core';
import { openSqliteStorage, type SqliteStorage } from '@switchboard/store';
import fc from 'fast-check';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../src/metrics/gateway-metrics.js';
import { timedModelClient, watchedPolicy } from '../src/metrics/observers.js';
import { startMetricsServer } from '../src/metrics/metrics-http.js';
import pino from 'pino';
import { isLoopbackHost } from '../src/config-metrics.js';
import { defaultModelSpec } from '@switchboard/agent';

let storage: SqliteStorage;
beforeEach(() => {
  storage = openSqliteStorage({ file: ':memory:' });
});
afterEach(() => storage.close());

/** A channel account that reports `state` (only what the metrics read of a channel). */
const channel = (type: string, account: string, state: 'up' | 'degraded' | 'down' | 'starting') =>
  ({ id: `${type}:${account}`, type, account, health: () => ({ state }) }) as unknown as Channel;

/** The value of one series line (`name{labels} value`) in exposition text; undefined when absent. */
function series(text: string, line: string): number | undefined {
  const hit = text.split('\n').find((l) => l.startsWith(`${line} `));
  return hit === undefined ? undefined : Number(hit.slice(line.length + 1));
}

const metricsOver = (channels: Channel[] = [], active = 0) => new GatewayMetrics({ storage, channels, activeTurns: () => active });

describe('GatewayMetrics', () => {
  it('keeps its own registry: two in one process count apart and never collide', async () => {
    const a = metricsOver();
    const b = metricsOver();
    a.turnEnded({ channel: 'openai', account: 'default', agentId: 'default', state: 'completed', reason: 'completed', durationMs: 1500 });
    const ta = await a.scrape();
    const tb = await b.scrape();
    // Any channel type is a label value as it is: a new channel needs no change here.
    expect(series(ta, 'switchboard_turns_total{channel="openai",account="default",outcome="completed"}')).toBe(1);
    expect(series(ta, 'switchboard_turn_duration_seconds_bucket{le="2.5",channel="openai",outcome="completed"}')).toBe(1);
    expect(series(ta, 'switchboard_turn_duration_seconds_bucket{le="1",channel="openai",outcome="completed"}')).toBe(0);
    expect(series(tb, 'switchboard_turns_total{channel="openai",account="default",outcome="completed"}')).toBeUndefined();
  });

  it('reads stored state at scrape time: dead letters, pending pairing per account, channel health, active turns', async () => {
    const m = metricsOver([channel('telegram', 'main', 'degraded'), channel('websocket', 'default', 'up'), channel('slack', 'team', 'starting')], 3);
    let text = await m.scrape();
    expect(series(text, 'switchboard_inbox_dead_letters')).toBe(0);
    expect(series(text, 'switchboard_pairing_requests_pending{channel="telegram",account="main"}')).toBe(0);
    expect(series(text, 'switchboard_channel_health{channel="telegram",account="main"}')).toBe(1);
    expect(series(text, 'switchboard_channel_health{channel="websocket",account="default"}')).toBe(2);
    expect(series(text, 'switchboard_channel_health{channel="slack",account="team"}')).toBe(0);
    expect(series(text, 'switchboard_turns_active')).toBe(3);

    await storage.deadLetters.record({
      channel: 'telegram',
      account: 'main',
      dedupeKey: 'u1',
      summary: 'text',
      error: 'boom',
      attempts: 5,
      receivedAt: new Date(),
    });
    const message: InboundMessage = {
      dedupeKey: 'm1',
      channel: 'telegram',
      account: 'main',
      conversation: { channel: 'telegram', account: 'main', id: '42', kind: 'dm' },
      sender: { identity: 'telegram:42', displayName: 'Ada', isBot: false },
      kind: 'dm',
      mentioned: false,
      text: 'let me in',
      platformId: '1',
      receivedAt: new Date(),
    };
    await storage.pairing.requestOrHold(
      {
        code: 'ABCDEFGH',
        channel: 'telegram',
        account: 'main',
        identity: 'telegram:42',
        displayName: 'Ada',
        conversation: message.conversation,
        message,
        expiresAt: new Date(Date.now() + 3_600_000),
      },
      { maxPending: 5, maxHeld: 3, maxHeldBytes: 4096, cooldown: 0 },
    );
    text = await m.scrape();
    expect(series(text, 'switchboard_inbox_dead_letters')).toBe(1);
    expect(series(text, 'switchboard_pairing_requests_pending{channel="telegram",account="main"}')).toBe(1);
    // Nothing of the person or the message shows.
    expect(text).not.toMatch(/Ada|let me in|telegram:42|ABCDEFGH|boom/);
    await storage.pairing.decide('ABCDEFGH', 'rejected', 'operator:test');
    expect(series(await m.scrape(), 'switchboard_pairing_requests_pending{channel="telegram",account="main"}')).toBe(0);
  });

  it('counts approvals decided by outcome', async () => {
    const m = metricsOver();
    m.approvalDecided('allowed');
    m.approvalDecided('expired');
    m.approvalDecided('expired');
    const text = await m.scrape();
    expect(series(text, 'switchboard_approvals_decided_total{outcome="allowed"}')).toBe(1);
    expect(series(text, 'switchboard_approvals_decided_total{outcome="expired"}')).toBe(2);
  });
});

const answer = (model: string): ModelResponse => ({
  message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
  stopReason: 'end_turn',
  usage: { inputTokens: 1000, outputTokens: 200, cacheReadInputTokens: 3000, cacheCreationInputTokens: 400 },
  model,
});
const request = (model: string): ModelRequest => ({ model, system: [], messages: [], tools: [], maxTokens: 100 });

async function drain(gen: AsyncGenerator<unknown, ModelResponse, void>): Promise<ModelResponse> {
  for (;;) {
    const step = await gen.next();
    if (step.done) return step.value;
  }
}

describe('the metrics port', () => {
  const timeouts = { headersTimeout: 5000, requestTimeout: 5000, connectionTimeout: 5000 };

  it('answers /metrics without a token, 404 elsewhere, and 500 without detail when the store fails', async () => {
    const own = openSqliteStorage({ file: ':memory:' });
    const server = await startMetricsServer(
      new GatewayMetrics({ storage: own, channels: [], activeTurns: () => 0 }),
      { port: 0 },
      timeouts,
      pino({ level: 'silent' }),
    );
    try {
      expect(new URL(server.url).hostname).toBe('127.0.0.1');
      const ok = await fetch(`${server.url}/metrics`);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('cache-control')).toBe('no-store');
      expect(await ok.text()).toContain('switchboard_inbox_dead_letters 0');
      expect((await fetch(`${server.url}/other`)).status).toBe(404);
      own.close();
      const failed = await fetch(`${server.url}/metrics`);
      expect(failed.status).toBe(500);
      expect(await failed.json()).toEqual({ code: 'internal', message: 'Collecting the metrics failed.' });
    } finally {
      await server.close();
    }
  });
});

describe('GatewayMetrics exposition with hostile label values', () => {
  type Family = { name: string; metrics: Array<{ labels?: Record<string, string>; value?: string }> };
  const parse = parsePrometheusTextFormat as unknown as (text: string) => Family[];

  it('any account, model or tool name (quotes, backslashes, newlines, __proto__) is escaped: the text parses and gives the value back', async () => {
    const name = fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), fc.constantFrom('__proto__', 'a"b', 'a\\b', 'line\nbreak', '{x="y"}', '# HELP'));
    await fc.assert(
      fc.asyncProperty(name, name, name, async (account, model, tool) => {
        const m = metricsOver([channel('webhook', account, 'up')]);
        m.turnEnded({ channel: 'webhook', account, agentId: 'default', state: 'completed', reason: 'completed', durationMs: 5 });
        m.modelCall(model, 0.5, { tokens: { inputTokens: 1, outputTokens: 2, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }, costUsd: 0 });
        m.toolCall(tool, 'ok');
        const families = new Map(parse(await m.scrape()).map((f) => [f.name, f]));
        const turns = families.get('switchboard_turns_total')?.metrics ?? [];
        expect(turns.map((s) => s.labels?.account)).toEqual([account]);
        expect(families.get('switchboard_channel_health')?.metrics.map((s) => s.labels?.account)).toEqual([account]);
        const tokens = families.get('switchboard_model_tokens_total')?.metrics ?? [];
        expect(tokens.find((s) => s.labels?.kind === 'output')).toMatchObject({ labels: { model }, value: '2' });
        expect(families.get('switchboard_tool_calls_total')?.metrics).toEqual([{ labels: { tool, outcome: 'ok' }, value: '1' }]);
      }),
      { numRuns: Number(process.env.SWB_PROPERTY_RUNS ?? 100) },
    );
  });
});

describe('timedModelClient', () => {
  const spec = () => ({ ...defaultModelSpec('m'), price: { input: 3, output: 15, cacheRead: 0.3, cacheWrite5m: 3.75, cacheWrite1h: 6 } });

  it('times each call by requested model and counts its tokens and cost; the stream passes through', async () => {
    const m = metricsOver();
    const inner: ModelClient = {
      async *stream(req) {
        yield { type: 'text_delta', text: 'hi' };
        // The API may answer with a dated name: the label stays the configured one.
        return answer(`${req.model}-20250101`);
      },
    };
    const client = timedModelClient(inner, m, spec);
    const res = await drain(client.stream(request('claude-x'), new AbortController().signal));
    expect(res.model).toBe('claude-x-20250101');
    const text = await m.scrape();
    expect(series(text, 'switchboard_model_call_duration_seconds_count{model="claude-x",outcome="ok"}')).toBe(1);
    expect(series(text, 'switchboard_model_tokens_total{model="claude-x",kind="input"}')).toBe(1000);
    expect(series(text, 'switchboard_model_tokens_total{model="claude-x",kind="output"}')).toBe(200);
    expect(series(text, 'switchboard_model_tokens_total{model="claude-x",kind="cache_read"}')).toBe(3000);
    expect(series(text, 'switchboard_model_tokens_total{model="claude-x",kind="cache_write"}')).toBe(400);
    // 1000×3 + 200×15 + 3000×0.3 + 400×3.75 micro-USD per token-million.
    expect(series(text, 'switchboard_model_cost_usd_total{model="claude-x"}')).toBeCloseTo((3000 + 3000 + 900 + 1500) / 1_000_000, 12);
    expect(text).not.toContain('20250101');
    expect(client.countTokens).toBeUndefined();
  });

  it('a call that throws counts as an error with no tokens, and the throw goes on', async () => {
    const m = metricsOver();
    const inner: ModelClient = {
      // biome-ignore lint/correctness/useYield: a call that fails before its first event
      async *stream() {
        throw new Error('overloaded');
      },
      countTokens: async () => 7,
    };
    const client = timedModelClient(inner, m, spec);
    await expect(drain(client.stream(request('claude-x'), new AbortController().signal))).rejects.toThrow('overloaded');
    expect(await client.countTokens!(request('claude-x'), new AbortController().signal)).toBe(7);
    const text = await m.scrape();
    expect(series(text, 'switchboard_model_call_duration_seconds_count{model="claude-x",outcome="error"}')).toBe(1);
    expect(series(text, 'switchboard_model_tokens_total{model="claude-x",kind="input"}')).toBeUndefined();
  });
});

describe('watchedPolicy', () => {
  const tool = (name: string) => ({ name }) as unknown as AnyTool;
  const ctx = {} as ToolContext;

  it('counts denials by kind and finished calls by their result, passing decisions and hook text on', async () => {
    const m = metricsOver();
    const policy: TurnPolicy = {
      tools: [],
      canUseTool: async (t) => (t.name === 'exec' ? { behavior: 'deny', reason: 'no', kind: 'safety' } : { behavior: 'allow' }),
      afterTool: async () => 'hook note',
    };
    const watched = watchedPolicy(policy, m);
    expect(await watched.canUseTool(tool('exec'), {}, ctx)).toEqual({ behavior: 'deny', reason: 'no', kind: 'safety' });
    expect(await watched.canUseTool(tool('read_file'), {}, ctx)).toEqual({ behavior: 'allow' });
    const result = (isError: boolean) => ({ type: 'tool_result' as const, tool_use_id: 'x', content: 'r', ...(isError ? { is_error: true } : {}) });
    expect(await watched.afterTool!({ tool: tool('read_file'), input: {}, result: result(false), ctx })).toBe('hook note');
    await watched.afterTool!({ tool: tool('read_file'), input: {}, result: result(true), ctx });
    const text = await m.scrape();
    expect(series(text, 'switchboard_tool_calls_total{tool="exec",outcome="denied"}')).toBe(1);
    expect(series(text, 'switchboard_tool_denials_total{tool="exec",kind="safety"}')).toBe(1);
    expect(series(text, 'switchboard_tool_calls_total{tool="read_file",outcome="ok"}')).toBe(1);
    expect(series(text, 'switchboard_tool_calls_total{tool="read_file",outcome="error"}')).toBe(1);
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.1', false],
    ['example.com', false],
    ['127.0.0.1.example.com', false],
  ])('%s → %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});
