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
  it('writes each call its row as the call completes (before the tool runs, before the turn ends) with its origin and its cost', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    const order: string[] = [];
    const record = raw.usage.record.bind(raw.usage);
    raw.usage.record = async (r) => {
      order.push(`usage:${r.model}`);
      return record(r);
    };
    const finish = raw.turns.finish.bind(raw.turns);
    raw.turns.finish = async (turnId, end) => {
      order.push('turns.finish');
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

    expect(seenByTool).toEqual([1]);
    expect(order).toEqual(['usage:test-model', 'usage:test-model', 'turns.finish']);
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

  it('a failing usage insert is logged and the turn still answers', async () => {
    const raw = openSqliteStorage({ file: ':memory:' });
    raw.usage.record = async () => {
      throw new Error('disk full');
    };
    const h = harness({ raw, steps: [say('still here')] });
    const { turnId } = await h.send('m1', 'hi');
    await settled(h);
    expect(await raw.turns.get(turnId)).toMatchObject({ state: 'completed', usage: { inputTokens: 1, outputTokens: 1 } });
  });
});
