import { defaultModelSpec, type ModelSpec } from '@switchboard/agent';
import { openSqliteStorage } from '@switchboard/store';
import { describe, expect, it } from 'vitest';
import { usageCost } from '../src/index.js';
import { harness, say, testTool } from './engine-fixtures.js';

const settled = async (h: { engine: { drain(ms: number): Promise<boolean> } }) => expect(await h.engine.drain(60_000)).toBe(true);

// Prices chosen so that every kind of token contributes a distinct amount.
const spec = (name: string): ModelSpec => ({
  ...defaultModelSpec(name),
  price: { input: 2, output: 10, cacheRead: 0.5, cacheWrite5m: 4, cacheWrite1h: 8 },
});

describe('usageCost', () => {
  it('charges each kind of token at its price per million, cache writes at the 5-minute price', () => {
    const price = spec('m').price;
    expect(usageCost({ inputTokens: 1_000_000, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }, price)).toBe(2);
    expect(usageCost({ inputTokens: 0, outputTokens: 500_000, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }, price)).toBe(5);
    expect(usageCost({ inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 2_000_000, cacheCreationInputTokens: 0 }, price)).toBe(1);
    expect(usageCost({ inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 250_000 }, price)).toBe(1);
    expect(usageCost({ inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 1000, cacheCreationInputTokens: 50 }, price)).toBeCloseTo(
      (100 * 2 + 20 * 10 + 1000 * 0.5 + 50 * 4) / 1e6,
      12,
    );
  });
});

describe('TurnEngine: one usage row per model call', () => {
  it('stores each call its row with the turn’s next write (before the tool runs, with the end), with its origin and its cost, at no write of its own', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    const order: string[] = [];
    const begin = raw.turns.begin.bind(raw.turns);
    raw.turns.begin = async (turnId, entries, calls) => {
      order.push(`turns.begin:${calls?.length ?? 0} calls`);
      return begin(turnId, entries, calls);
    };
    const finish = raw.turns.finish.bind(raw.turns);
    raw.turns.finish = async (turnId, end) => {
      order.push(`turns.finish:${end.calls?.length ?? 0} calls`);
      return finish(turnId, end);
    };
    const seenByTool: number[] = [];
    const read = testTool('read_file', true, async () => {
      seenByTool.push((await raw.usage.report()).totals.calls);
      return 'contents';
    });
    const first = { inputTokens: 120, outputTokens: 30, cacheReadInputTokens: 0, cacheCreationInputTokens: 2000 };
    const second = { inputTokens: 15, outputTokens: 7, cacheReadInputTokens: 2000, cacheCreationInputTokens: 160 };
    const h = harness({
      raw,
      tools: [read],
      modelSpec: spec,
      steps: [
        { content: [{ type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a.txt' } }], usage: first },
        { ...say('done'), usage: second },
      ],
    });
    const { turnId, sessionId } = await h.send('m1', 'read a.txt', 'p7');
    await settled(h);

    // The first call's row is stored before the tool runs (with the assistant's tool call), the
    // second with the end: no usage write of its own.
    expect(seenByTool).toEqual([1]);
    expect(order).toEqual(['turns.begin:1 calls', 'turns.finish:1 calls']);
    expect(h.writes).not.toContain('usage.record');
    const rows = raw.db.prepare('SELECT * FROM usage ORDER BY created_at, rowid').all() as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(2);
    const price = spec('test-model').price;
    expect(rows[0]).toMatchObject({
      turn_id: turnId,
      session_id: sessionId,
      principal_id: 'p7',
      agent_id: 'main',
      channel: 'websocket:default',
      model: 'test-model',
      input_tokens: 120,
      output_tokens: 30,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 2000,
      context_tokens: 2120,
    });
    expect(rows[0]!.cost_usd).toBeCloseTo(usageCost(first, price), 12);
    expect(rows[1]).toMatchObject({
      input_tokens: 15,
      output_tokens: 7,
      cache_read_input_tokens: 2000,
      cache_creation_input_tokens: 160,
      context_tokens: 2175,
    });
    expect(rows[1]!.cost_usd).toBeCloseTo(usageCost(second, price), 12);

    // The turn's summed usage is still written with its end, and agrees with the rows.
    const report = await raw.usage.report({ principalId: 'p7' });
    expect(report.totals).toMatchObject({ inputTokens: 135, outputTokens: 37, cacheReadInputTokens: 2000, cacheCreationInputTokens: 2160, calls: 2 });
    expect(await raw.turns.get(turnId)).toMatchObject({
      usage: { inputTokens: 135, outputTokens: 37, cacheReadInputTokens: 2000, cacheCreationInputTokens: 2160 },
    });
  });

  it('a text turn is still two writes: its one call rides the finish', async () => {
    const h = harness({ steps: [say('still here')] });
    const { turnId } = await h.send('m1', 'hi');
    await settled(h);
    expect(h.writes).toEqual(['turns.accept', 'turns.finish']);
    expect(await h.raw.turns.get(turnId)).toMatchObject({ state: 'completed', usage: { inputTokens: 1, outputTokens: 1 } });
    expect((await h.raw.usage.report()).totals).toMatchObject({ inputTokens: 1, outputTokens: 1, calls: 1 });
  });
});
