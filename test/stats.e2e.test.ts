import { describe, expect, it } from 'vitest';
import { api } from '@switchboard/testkit';
import { chat, useGateway } from './helpers.js';

const env = useGateway({ client: true });

describe('GET /api/v1/stats', () => {
  it('reports memory, active turns and event-loop delay since the last reset', async () => {
    const { gw, ws } = env;
    const t = await chat(ws, 'st1', 'hello');
    // The final frame goes out before the engine lets go of the turn: wait for that, then count.
    await gw.waitForLog((l) => l.includes('turn finished') && l.includes(String(t.end.turnId)));
    const token = gw.credentials().operatorToken;
    const first = await api(gw, 'GET', '/api/v1/stats?reset=true', { token });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ activeTurns: 0, memory: { rssMB: expect.any(Number) } });
    expect(first.json.eventLoopDelayMs.samples).toBeGreaterThan(0);
    expect(first.json.eventLoopDelayMs.p99).toBeGreaterThanOrEqual(first.json.eventLoopDelayMs.p50);
    expect((await api(gw, 'GET', '/api/v1/stats')).status).toBe(401);
    expect((await api(gw, 'GET', '/api/v1/stats?reset=maybe', { token })).status).toBe(400);
  });
});
