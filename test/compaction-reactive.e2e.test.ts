import { describe, expect, it } from 'vitest';
import { SUMMARY_PREFIX } from '@switchboard/agent';
import { api, type GatewayProcess, isSummaryRequest, type RecordedRequest, type ScriptedHttpError, summaryHandler } from '@switchboard/testkit';
import { chat, useGateway } from './helpers.js';

// Issue 13, acceptance 2: reactive compaction after prompt_too_long, and its circuit breaker.
const TOO_LONG: ScriptedHttpError = { status: 400, type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' };
const SUMMARY = 'SUMMARY: the tester talks about fruit. Decisions: none. Open tasks: none. Facts to keep: apples are red.';

const env = useGateway({
  client: true,
  config: {
    limits: { modelMaxRetries: 0 },
    channels: { websocket: { accounts: { default: { rateLimit: { burst: 1000, perMinute: 6000 } } } } },
  },
});

type Entry = { seq: number; kind: string; turnId: string | null; payload: Record<string, unknown> };

async function transcript(gw: GatewayProcess): Promise<Entry[]> {
  const token = gw.credentials().operatorToken;
  const { sessions } = (await api(gw, 'GET', '/api/v1/sessions?channel=websocket', { token })).json as { sessions: Array<{ id: string }> };
  return ((await api(gw, 'GET', `/api/v1/sessions/${sessions[0]!.id}/transcript`, { token })).json as { entries: Entry[] }).entries;
}

const firstText = (req: RecordedRequest) => {
  const content = req.body.messages?.[0]?.content;
  return typeof content === 'string' ? content : String(content?.[0]?.text ?? '');
};

/** The requests the fake received while `run` ran. */
async function requestsDuring<T>(run: () => Promise<T>): Promise<{ result: T; requests: RecordedRequest[] }> {
  const before = env.fake.requests.length;
  const result = await run();
  return { result, requests: env.fake.requests.slice(before) };
}

describe('reactive compaction (acceptance 2)', () => {
  it('prompt_too_long once: the turn compacts, retries and answers', async () => {
    const { ws, fake, gw } = env;
    for (let n = 1; n <= 3; n++) expect((await chat(ws, `warm-${n}`, `fruit fact ${n}: apples are red`)).end.type).toBe('final');
    fake.setHandler(summaryHandler({ text: SUMMARY }));
    fake.enqueue({ error: TOO_LONG });
    const { result, requests } = await requestsDuring(() => chat(ws, 'once', 'what colour are apples?'));
    expect(result.end.type, JSON.stringify(result.end)).toBe('final');
    expect(String(result.end.text)).toContain('echo: what colour are apples?');
    // Refused, one summary call, one retry that starts from the boundary summary.
    expect(requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'turn'))).toEqual(['turn', 'summary', 'turn']);
    expect(firstText(requests[2]!).startsWith(`${SUMMARY_PREFIX}\n\n${SUMMARY}`)).toBe(true);
    const boundary = (await transcript(gw)).filter((e) => e.kind === 'compact');
    expect(boundary).toHaveLength(1);
    expect(boundary[0]!.payload).toMatchObject({ trigger: 'reactive', summary: SUMMARY });
  });

  it('prompt_too_long on every request of a turn: one reactive compaction, then the turn ends cleanly; the next message works and the breaker has not locked the session', async () => {
    const { ws, fake, gw } = env;
    fake.setHandler(summaryHandler({ text: SUMMARY }, () => ({ error: TOO_LONG })));
    const { result, requests } = await requestsDuring(() => chat(ws, 'always', 'and pears?'));
    expect(result.end.type).toBe('error');
    expect(String(result.end.message ?? result.end.error ?? '')).toMatch(/too long/i);
    // No loop: the refused call, one summary, the compacted retry, the retry without the oldest turns.
    expect(requests.filter(isSummaryRequest)).toHaveLength(1);
    expect(requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'turn'))).toEqual(['turn', 'summary', 'turn', 'turn']);
    const entries = await transcript(gw);
    const boundaries = entries.filter((e) => e.kind === 'compact');
    expect(boundaries.at(-1)!.payload).toMatchObject({ trigger: 'reactive', dropped: expect.any(Number) });
    // The person's message is kept (retryable).
    expect(entries.some((e) => e.kind === 'user' && JSON.stringify(e.payload).includes('and pears?'))).toBe(true);

    // The fake is back to normal: the next message works from the last boundary.
    fake.setHandler(summaryHandler({ text: SUMMARY }));
    const next = await requestsDuring(() => chat(ws, 'after', 'and plums?'));
    expect(next.result.end.type).toBe('final');
    expect(next.requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'turn'))).toEqual(['turn']);
    // The breaker is not locked: one more refusal is compacted again (the third of three this hour).
    fake.enqueue({ error: TOO_LONG });
    const again = await requestsDuring(() => chat(ws, 'again', 'and cherries?'));
    expect(again.result.end.type).toBe('final');
    expect(again.requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'turn'))).toEqual(['turn', 'summary', 'turn']);
    // The fourth in the hour: the breaker is open, so no summary call; the oldest turns are dropped instead.
    fake.enqueue({ error: TOO_LONG });
    const open = await requestsDuring(() => chat(ws, 'open', 'and grapes?'));
    expect(open.result.end.type).toBe('final');
    expect(open.requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'turn'))).toEqual(['turn', 'turn']);
    fake.setHandler(undefined);
  });
});
