import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUMMARY_PREFIX } from '@switchboard/agent';
import {
  api,
  connectWs,
  type FakeAnthropic,
  type GatewayProcess,
  isSummaryRequest,
  type RecordedBlock,
  startFakeAnthropic,
  startGateway,
  stopAllGateways,
  summaryHandler,
  type WsClient,
  type WsFrame,
} from '@switchboard/testkit';
import { bearer, chat } from './helpers.js';

// Issue 13, acceptance 1: a long WebSocket session with a small window compacts instead of dying.
const WINDOW = 20_000;
const TURNS = 300;

let fake: FakeAnthropic;
let gw: GatewayProcess;
let ws: WsClient;
let summaries = 0;

beforeAll(async () => {
  // The fake refuses, like the API, any request whose input plus max_tokens exceeds the window.
  fake = await startFakeAnthropic({ contextWindow: WINDOW });
  fake.setHandler(
    summaryHandler(() => ({
      text: `SUMMARY-${++summaries}: People: the tester, who sends numbered messages. Decisions: none. Open tasks: keep answering. Facts to keep: the numbering continues.`,
    })),
  );
  gw = await startGateway({
    modelUrl: fake.url,
    config: {
      models: { 'claude-test': { contextWindow: WINDOW, outputReserve: 2_000 } },
      channels: { websocket: { accounts: { default: { rateLimit: { burst: 1000, perMinute: 6000 } } } } },
    },
  });
  ws = await connectWs(gw.wsUrl, { headers: bearer(gw.credentials().clientToken) });
});

afterAll(async () => {
  ws?.close();
  await stopAllGateways();
  await fake?.close();
});

const firstText = (req: { body: { messages?: Array<{ content: string | RecordedBlock[] }> } }) => {
  const content = req.body.messages?.[0]?.content;
  return typeof content === 'string' ? content : String(content?.[0]?.text ?? '');
};

describe('auto-compaction in a long session (acceptance 1)', () => {
  it(`a ${TURNS}-turn session with a ${WINDOW}-token window never gets prompt_too_long: it compacts, tells the person, and goes on from the summary`, async () => {
    const filler =
      'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud.';
    const started = Date.now();
    for (let n = 1; n <= TURNS; n++) {
      const t = await chat(ws, `long-${n}`, `message ${n}: ${filler}`);
      expect(t.end.type, `turn ${n}: ${JSON.stringify(t.end)}`).toBe('final');
      expect(String(t.end.text)).toContain(`echo: message ${n}:`);
    }
    const elapsed = Date.now() - started;
    console.log(`[compaction e2e] ${TURNS} turns in ${elapsed} ms; ${summaries} summary calls; ${fake.requests.length} requests`);

    // No request was too long, and none came near the window.
    expect(fake.tooLong).toBe(0);
    const calls = fake.requests.filter((r) => r.path === '/v1/messages');
    expect(calls.every((r) => r.usage !== undefined)).toBe(true);
    const sizes = calls.map((r) => r.usage!.input_tokens + r.usage!.cache_read_input_tokens + r.usage!.cache_creation_input_tokens);
    const largest = Math.max(...sizes);
    console.log(`[compaction e2e] largest request ${largest} tokens (${((100 * largest) / WINDOW).toFixed(1)}% of the window)`);
    expect(largest).toBeLessThan(0.8 * WINDOW);
    // The shapers ask the API for an exact count only near a threshold: some turns, far from all.
    const counts = fake.countTokensRequests.length;
    console.log(`[compaction e2e] ${counts} count_tokens requests for ${calls.length} model calls`);
    expect(counts).toBeGreaterThan(0);
    expect(counts).toBeLessThan(calls.length / 2);

    // It compacted, more than once, and told the person each time in one line.
    expect(summaries).toBeGreaterThanOrEqual(2);
    const notices = ws.frames.filter((f: WsFrame) => f.type === 'notice' && String(f.text).startsWith('Compacted the conversation'));
    expect(notices.length).toBe(summaries);
    expect(String(notices[0]!.text)).not.toContain('\n');

    // After the first summary call, the next turn request starts from that boundary's summary.
    const firstSummary = calls.findIndex(isSummaryRequest);
    const next = calls.slice(firstSummary + 1).find((r) => !isSummaryRequest(r))!;
    expect(firstText(next).startsWith(`${SUMMARY_PREFIX}\n\nSUMMARY-1:`)).toBe(true);
    // Summary calls need no tools and stay under the threshold too.
    for (const s of calls.filter(isSummaryRequest)) expect(s.body.tools ?? []).toEqual([]);

    // The control API shows the boundaries and the whole history before them.
    const token = gw.credentials().operatorToken;
    const { sessions } = (await api(gw, 'GET', '/api/v1/sessions?channel=websocket', { token })).json as { sessions: Array<{ id: string }> };
    const transcript = (await api(gw, 'GET', `/api/v1/sessions/${sessions[0]!.id}/transcript`, { token })).json as {
      entries: Array<{ seq: number; kind: string; payload: { summary?: string; throughSeq?: number; trigger?: string; content?: Array<{ text?: string }> } }>;
    };
    const boundaries = transcript.entries.filter((e) => e.kind === 'compact');
    expect(boundaries).toHaveLength(summaries);
    expect(boundaries[0]!.payload).toMatchObject({ trigger: 'auto', summary: expect.stringContaining('SUMMARY-1:') });
    const userTexts = transcript.entries.filter((e) => e.kind === 'user').map((e) => e.payload.content?.map((b) => b.text ?? '').join('') ?? '');
    expect(userTexts).toHaveLength(TURNS);
    expect(userTexts[0]).toContain('message 1:');
    const first = transcript.entries.find((e) => e.kind === 'user')!;
    expect(first.seq).toBeLessThanOrEqual(boundaries[0]!.payload.throughSeq!);

    // Every model call is a usage row, the summary calls included, with the tokens the fake reported.
    const usage = (await api(gw, 'GET', '/api/v1/usage', { token })).json as { totals: { calls: number; outputTokens: number } };
    expect(usage.totals.calls).toBe(calls.length);
    expect(usage.totals.outputTokens).toBe(calls.reduce((sum, r) => sum + r.usage!.output_tokens, 0));
  }, 300_000);
});
