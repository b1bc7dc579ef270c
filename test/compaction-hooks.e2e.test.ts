import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, isSummaryRequest, summaryHandler } from '@switchboard/testkit';
import { chat, useGateway } from './helpers.js';

// PreCompact / PostCompact hooks around a compaction (here a manual one through the control API).
let hookServer: Server;
let hookPort: number;
const seen: Array<Record<string, unknown>> = [];

// The hook endpoint is up before the gateway starts (registered before useGateway's beforeAll).
beforeAll(async () => {
  hookServer = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      seen.push(body);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(body.hookEvent === 'PreCompact' ? { additionalContext: 'Always keep the code word PAPAYA.' } : {}));
    });
  });
  await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
  hookPort = (hookServer.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((r) => hookServer.close(() => r()));
});

const env = useGateway({
  client: true,
  config: () => ({
    hooks: {
      PreCompact: [{ type: 'http', url: `http://127.0.0.1:${hookPort}/pre` }],
      PostCompact: [{ type: 'http', url: `http://127.0.0.1:${hookPort}/post` }],
    },
  }),
});

describe('compaction hooks', () => {
  it('PreCompact runs before the summary call and its additionalContext joins the instructions; PostCompact reports the boundary', async () => {
    const { ws, fake, gw } = env;
    fake.setHandler(summaryHandler({ text: 'SUMMARY: PAPAYA.' }));
    // Long enough that a summary is smaller than what it replaces (a short history is not compacted).
    const filler = ' Some detail about it, to be remembered later.'.repeat(20);
    for (let n = 1; n <= 3; n++) expect((await chat(ws, `h-${n}`, `note ${n}${filler}`)).end.type).toBe('final');
    const token = gw.credentials().operatorToken;
    const { sessions } = (await api(gw, 'GET', '/api/v1/sessions?channel=websocket', { token })).json as { sessions: Array<{ id: string }> };
    const id = sessions[0]!.id;
    const res = await api(gw, 'POST', `/api/v1/sessions/${id}/compact`, { token, body: { instructions: 'be brief' } });
    expect(res.status, res.text).toBe(200);
    const summary = fake.requests.filter(isSummaryRequest).at(-1)!;
    const sent = JSON.stringify(summary.body.messages);
    expect(sent).toContain('be brief');
    expect(sent).toContain('Always keep the code word PAPAYA.');
    const pre = seen.find((s) => s.hookEvent === 'PreCompact')!;
    expect(pre).toMatchObject({
      sessionId: id,
      trigger: 'manual',
      instructions: 'be brief',
      tokensBefore: expect.any(Number),
      turnId: expect.stringMatching(/^compaction:/),
    });
    const post = seen.find((s) => s.hookEvent === 'PostCompact')!;
    expect(post).toMatchObject({ sessionId: id, trigger: 'manual', throughSeq: res.json.compacted.throughSeq, tokensAfter: res.json.compacted.tokensAfter });
    expect(seen.findIndex((s) => s.hookEvent === 'PreCompact')).toBeLessThan(seen.findIndex((s) => s.hookEvent === 'PostCompact'));
    fake.setHandler(undefined);
  });
});
