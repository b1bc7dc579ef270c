import { describe, expect, it } from 'vitest';
import { SUMMARY_PREFIX } from '@switchboard/agent';
import { api, type GatewayProcess, isSummaryRequest, type RecordedRequest, summaryHandler } from '@switchboard/testkit';
import { chat, useGateway } from './helpers.js';

// Issue 13, acceptance 6: a failing compaction (the fake errors on, or stalls, the summary call) loses nothing.
const WINDOW = 20_000;
const FILLER = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.';

const env = useGateway({
  client: true,
  config: {
    limits: { modelMaxRetries: 0 },
    models: { 'claude-test': { contextWindow: WINDOW, outputReserve: 2_000 } },
    context: { compaction: { timeout: '1s' } },
    channels: { websocket: { accounts: { default: { rateLimit: { burst: 1000, perMinute: 6000 } } } } },
  },
});

type Entry = { seq: number; kind: string; payload: Record<string, unknown> };

async function transcript(gw: GatewayProcess): Promise<Entry[]> {
  const token = gw.credentials().operatorToken;
  const { sessions } = (await api(gw, 'GET', '/api/v1/sessions?channel=websocket', { token })).json as { sessions: Array<{ id: string }> };
  return ((await api(gw, 'GET', `/api/v1/sessions/${sessions[0]!.id}/transcript`, { token })).json as { entries: Entry[] }).entries;
}

let n = 0;
/** Sends messages until one turn makes a summary call; returns that turn's result and requests. */
async function untilSummaryCall() {
  const { ws, fake } = env;
  for (;;) {
    const before = fake.requests.length;
    const text = `message ${++n}: ${FILLER}`;
    const result = await chat(ws, `m-${n}`, text);
    const requests: RecordedRequest[] = fake.requests.slice(before);
    if (requests.some(isSummaryRequest)) return { text, result, requests };
    expect(result.end.type).toBe('final');
    if (n > 400) throw new Error('no compaction was attempted');
  }
}

describe('a failing compaction loses nothing (acceptance 6)', () => {
  it('the summary call errors: the message is answered uncompacted, the transcript is intact, and a later compaction works', async () => {
    const { fake, gw } = env;
    fake.setHandler(summaryHandler({ error: { status: 500, type: 'api_error', message: 'Internal server error' } }));
    const failed = await untilSummaryCall();
    expect(failed.result.end.type, JSON.stringify(failed.result.end)).toBe('final');
    expect(String(failed.result.end.text)).toContain(`echo: message ${n}:`);
    // One summary attempt, then the turn's own call, uncompacted (it still starts with the first message).
    expect(failed.requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'turn'))).toEqual(['summary', 'turn']);
    const sent = failed.requests[1]!.body.messages!;
    expect(JSON.stringify(sent[0]!.content)).toContain('message 1:');
    const entries = await transcript(gw);
    expect(entries.filter((e) => e.kind === 'compact')).toEqual([]);
    const users = entries.filter((e) => e.kind === 'user').map((e) => JSON.stringify(e.payload));
    expect(users).toHaveLength(n);
    for (const [i, u] of users.entries()) expect(u).toContain(`message ${i + 1}:`);
    expect(entries.filter((e) => e.kind === 'assistant')).toHaveLength(n);

    // The summary stalls past context.compaction.timeout: the same — answered, nothing lost.
    fake.setHandler(summaryHandler({ hold: true, text: 'never sent' }));
    const stalled = await untilSummaryCall();
    expect(stalled.result.end.type).toBe('final');
    expect(String(stalled.result.end.text)).toContain(`echo: message ${n}:`);
    expect((await transcript(gw)).filter((e) => e.kind === 'compact')).toEqual([]);
    fake.release();

    // The model is back: the next turn compacts and goes on from the summary.
    fake.setHandler(summaryHandler({ text: 'SUMMARY: numbered messages from the tester.' }));
    const ok = await untilSummaryCall();
    expect(ok.result.end.type).toBe('final');
    expect(ok.requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'turn'))).toEqual(['summary', 'turn']);
    const first = ok.requests[1]!.body.messages![0]!.content as Array<{ text?: string }>;
    expect(String(first[0]!.text).startsWith(`${SUMMARY_PREFIX}\n\nSUMMARY: numbered`)).toBe(true);
    const boundaries = (await transcript(gw)).filter((e) => e.kind === 'compact');
    expect(boundaries).toHaveLength(1);
    expect(boundaries[0]!.payload).toMatchObject({ trigger: 'auto' });
    fake.setHandler(undefined);
  }, 120_000);
});
