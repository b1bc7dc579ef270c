import { describe, expect, it } from 'vitest';
import { defaultModelSpec } from '@switchboard/agent';
import { usageCost } from '@switchboard/core';
import { api } from '@switchboard/testkit';
import { chat, collectTurn, useGateway } from './helpers.js';

const env = useGateway({ client: true });

describe('GET /api/v1/usage', () => {
  it('answers totals and a per-day series that equal the sum of the usage the fake reported, one call per model request', async () => {
    const { gw, ws, fake } = env;
    const token = gw.credentials().operatorToken;
    const before = fake.requests.length;
    fake.enqueue({ toolUses: [{ name: 'list_files', input: {}, id: 'toolu_usage_list' }] }, { hold: true, text: 'Listed.' });
    ws.send({ type: 'message', clientId: 'u1', text: 'list my files' });
    // Mid-turn, while the second model call is held: the first call's row is already there.
    await fake.waitForHeld(1);
    const mid = await api(gw, 'GET', '/api/v1/usage', { token });
    expect(mid.status, JSON.stringify(mid.json)).toBe(200);
    expect(mid.json.totals).toMatchObject({ calls: 1, inputTokens: fake.requests[before]!.usage!.input_tokens });
    fake.release();
    const first = await collectTurn(ws, 'u1');
    expect(first.end).toMatchObject({ type: 'final', text: 'Listed.' });
    const second = await chat(ws, 'u2', 'and say hello');
    expect(second.end.type).toBe('final');
    await gw.waitForLog((l) => l.includes('turn finished') && l.includes(String(second.end.turnId)));

    const calls = fake.requests.slice(before).filter((r) => r.path === '/v1/messages');
    expect(calls).toHaveLength(3);
    const sum = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
    for (const r of calls) {
      sum.inputTokens += r.usage!.input_tokens;
      sum.outputTokens += r.usage!.output_tokens;
      sum.cacheReadInputTokens += r.usage!.cache_read_input_tokens;
      sum.cacheCreationInputTokens += r.usage!.cache_creation_input_tokens;
    }
    expect(sum.inputTokens).toBeGreaterThan(0);
    expect(sum.outputTokens).toBeGreaterThan(0);

    const res = await api(gw, 'GET', '/api/v1/usage', { token });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.totals).toMatchObject({ ...sum, calls: 3 });
    expect(res.json.totals.costUsd).toBeGreaterThan(0);
    // The cost is each call's usage at the model's price (the test config sets no models.claude-test: the generic default).
    let expectedCost = 0;
    for (const r of calls) {
      const u = r.usage!;
      const usage = {
        inputTokens: u.input_tokens,
        outputTokens: u.output_tokens,
        cacheReadInputTokens: u.cache_read_input_tokens,
        cacheCreationInputTokens: u.cache_creation_input_tokens,
      };
      expectedCost += usageCost(usage, defaultModelSpec(r.body.model as string).price);
    }
    expect(res.json.totals.costUsd).toBeCloseTo(expectedCost, 10);
    const today = new Date().toISOString().slice(0, 10);
    expect(res.json.days).toEqual([{ day: today, ...res.json.totals }]);

    // Filters: the agent, the channel and the day match every call; another principal none.
    const filtered = await api(gw, 'GET', `/api/v1/usage?agent=default&channel=websocket:default&from=${today}&to=${today}`, { token });
    expect(filtered.status).toBe(200);
    expect(filtered.json.totals).toEqual(res.json.totals);
    const nobody = await api(gw, 'GET', '/api/v1/usage?principal=p_nobody', { token });
    expect(nobody.json).toEqual({
      totals: { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUsd: 0, calls: 0 },
      days: [],
    });
    const model = calls[0]!.body.model as string;
    expect((await api(gw, 'GET', `/api/v1/usage?model=${encodeURIComponent(model)}`, { token })).json.totals.calls).toBe(3);
  });

  it('refuses a bad filter with 400 naming the field, and needs a token', async () => {
    const { gw } = env;
    const token = gw.credentials().operatorToken;
    const bad = await api(gw, 'GET', '/api/v1/usage?from=2025-13-40', { token });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 'bad_request', message: expect.stringContaining('querystring/from') });
    const unknown = await api(gw, 'GET', '/api/v1/usage?colour=red', { token });
    expect(unknown.status).toBe(400);
    expect(unknown.json.message).toContain('colour');
    const reversed = await api(gw, 'GET', '/api/v1/usage?from=2025-02-02&to=2025-02-01', { token });
    expect(reversed.status).toBe(400);
    expect(reversed.json.message).toContain('querystring/to');
    expect((await api(gw, 'GET', '/api/v1/usage')).status).toBe(401);
  });
});
