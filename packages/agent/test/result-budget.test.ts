import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetResults, cutResult, headOf, messageCaps, runTool, tailOf, toolResultBudget, type ToolResultBlock } from '../src/index.js';
import { settleToolUses } from '../src/tool-batch.js';
import type { ToolEnvironment } from '../src/tool-prepare.js';
import type { AnyTool } from '../src/tool.js';
import { z } from 'zod';

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
/** Whether `text` ends inside a pair (a high surrogate last) or starts inside one (a low surrogate first) where `whole` had a pair. */
const splitsPair = (text: string, whole: string, at: 'end' | 'start') =>
  at === 'end'
    ? text.length > 0 && isHigh(text.charCodeAt(text.length - 1)) && isLow(whole.charCodeAt(text.length))
    : text.length > 0 && isLow(text.charCodeAt(0)) && isHigh(whole.charCodeAt(whole.length - text.length - 1));

const result = (id: string, content: string): ToolResultBlock => ({ type: 'tool_result', tool_use_id: id, content });
/** What a cut result shows of the original: its head and (when there is one) its tail, without the notes. */
function shownParts(content: string): { head: string; tail: string } {
  const parts = content.split('\n\n[');
  const head = parts[0]!;
  const afterOmission = content.slice(content.indexOf(']\n\n', head.length) + 3);
  const summary = afterOmission.lastIndexOf('\n\n[output cut: showing ');
  return { head, tail: afterOmission.startsWith('[output cut: showing ') ? '' : afterOmission.slice(0, summary) };
}

describe('cutResult', () => {
  it('keeps content within the budget unchanged', () => {
    expect(cutResult('abc', 3, 'toolu_1')).toEqual({ content: 'abc', cut: false });
  });

  it('shows the head, the reference with how to page the rest, the tail and a summary', () => {
    const whole = 'x'.repeat(6000) + 'y'.repeat(4000);
    const { content, cut } = cutResult(whole, 4000, 'toolu_big');
    expect(cut).toBe(true);
    expect(content.startsWith(`${'x'.repeat(3000)}\n\n[… 6000 characters omitted from offset 3000.`)).toBe(true);
    expect(content).toContain('read_result {"reference": "toolu_big", "offset": 3000, "length": …}');
    expect(content.endsWith(`\n\n${'y'.repeat(1000)}\n\n[output cut: showing 4000 of 10000 characters; the full result is kept in the session store]`)).toBe(
      true,
    );
  });

  it('shows only the head under 2,000 characters of budget', () => {
    const { content } = cutResult('a'.repeat(5000), 1000, 'r');
    expect(shownParts(content)).toEqual({ head: 'a'.repeat(1000), tail: '' });
  });

  it('never splits a surrogate pair and never shows more than its budget of the original (property)', () => {
    const text = fc.string({ unit: fc.constantFrom('a', '😀', '\ud800', '\udc00', 'é', '\n'), maxLength: 3000 });
    fc.assert(
      fc.property(text, fc.integer({ min: -10, max: 4000 }), fc.string({ maxLength: 300 }), (whole, budget, ref) => {
        const { content, cut } = cutResult(whole, budget, ref);
        if (!cut) {
          expect(content).toBe(whole);
          return;
        }
        const { head, tail } = shownParts(content);
        expect(whole.startsWith(head)).toBe(true);
        expect(whole.endsWith(tail)).toBe(true);
        expect(head.length + tail.length).toBeLessThanOrEqual(Math.max(0, budget));
        expect(splitsPair(head, whole, 'end')).toBe(false);
        expect(splitsPair(tail, whole, 'start')).toBe(false);
        // The notes on top stay bounded (the reference is shortened to 200 characters).
        expect(content.length - head.length - tail.length).toBeLessThan(1500);
      }),
    );
  });

  it('survives hostile budgets', () => {
    for (const budget of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -1, 0, 0.5, 2 ** 53]) {
      const out = cutResult('abcdef', budget, 'r');
      expect(typeof out.content).toBe('string');
    }
    expect(cutResult('abcdef', Number.NaN, 'r').cut).toBe(true);
  });
});

describe('headOf / tailOf', () => {
  it('drop half a pair instead of splitting it', () => {
    expect(headOf('a😀b', 2)).toBe('a');
    expect(headOf('a😀b', 3)).toBe('a😀');
    expect(tailOf('a😀b', 2)).toBe('b');
    expect(tailOf('a😀b', 3)).toBe('😀b');
    expect(headOf('abc', -5)).toBe('');
    expect(tailOf('abc', 99)).toBe('abc');
  });
});

describe('messageCaps', () => {
  it('returns the sizes when they fit, and lowers the largest to one common cap when not', () => {
    expect(messageCaps([10, 20], 30)).toEqual([10, 20]);
    expect(messageCaps([10, 100, 50], 80)).toEqual([10, 35, 35]);
    expect(messageCaps([5, 5], 0)).toEqual([0, 0]);
  });

  it('fits the total, only lowers, keeps the order of sizes and lowers a smaller one only as far as a larger one (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1_000_000 }), { maxLength: 40 }), fc.integer({ min: -5, max: 5_000_000 }), (sizes, max) => {
        const caps = messageCaps(sizes, max);
        const shown = caps.map((c, i) => Math.min(c, sizes[i]!));
        const total = shown.reduce((a, b) => a + b, 0);
        expect(total).toBeLessThanOrEqual(Math.max(0, max));
        if (sizes.reduce((a, b) => a + b, 0) <= Math.max(0, max)) expect(caps).toEqual(sizes);
        for (let i = 0; i < sizes.length; i++) {
          expect(shown[i]).toBeLessThanOrEqual(sizes[i]!);
          for (let j = 0; j < sizes.length; j++) if (sizes[i]! <= sizes[j]!) expect(shown[i]).toBeLessThanOrEqual(shown[j]!);
        }
        // As little as needed: one more character for every cut result would not fit.
        const cutCount = shown.filter((s, i) => s < sizes[i]!).length;
        if (cutCount > 0) expect(total + cutCount).toBeGreaterThan(Math.max(0, max));
      }),
    );
  });
});

describe('budgetResults', () => {
  it('cuts each result to its own budget, then the largest of the batch to the aggregate; exempt ones count but are never cut', () => {
    const out = budgetResults(
      [
        { result: result('a', 'a'.repeat(100)), budget: 1000 },
        { result: result('b', 'b'.repeat(5000)), budget: 3000 },
        { result: result('c', 'c'.repeat(700)), budget: null },
      ],
      2000,
    );
    expect(out[0]).toEqual({ result: result('a', 'a'.repeat(100)) });
    expect(out[1]!.fullContent).toBe('b'.repeat(5000));
    expect(out[1]!.result.content).toMatch(/\[output cut: showing 1200 of 5000 characters/);
    expect(out[2]).toEqual({ result: result('c', 'c'.repeat(700)) });
  });

  it('keeps is_error and the order', () => {
    const failed = { ...result('x', 'e'.repeat(50)), is_error: true };
    const out = budgetResults([{ result: failed, budget: 10 }], 1000);
    expect(out[0]!.result).toMatchObject({ tool_use_id: 'x', is_error: true });
    expect(out[0]!.fullContent).toBe('e'.repeat(50));
  });
});

describe('toolResultBudget', () => {
  it('is the tool’s own, else the default; null when exempt', () => {
    const budgets = { maxChars: 500, maxMessageChars: 900 };
    expect(toolResultBudget({}, budgets)).toBe(500);
    expect(toolResultBudget({ maxResultChars: 9000 }, budgets)).toBe(9000);
    expect(toolResultBudget({ maxResultChars: 9000, resultBudget: 'exempt' }, budgets)).toBeNull();
  });
});

describe('the aggregate budget over the batches of one message', () => {
  const big = (name: string, chars: number, concurrencySafe: boolean): AnyTool => ({
    name,
    description: name,
    input: z.object({}),
    readOnly: true,
    concurrencySafe,
    call: async () => ({ content: name[0]!.repeat(chars) }),
  });

  it('a later batch gets what the earlier ones left', async () => {
    const tools = [big('par', 3000, true), big('seq', 3000, false)];
    const env: ToolEnvironment = {
      tools: new Map(tools.map((t) => [t.name, t])),
      canUseTool: async () => ({ behavior: 'allow' }),
      signal: new AbortController().signal,
      toolContext: { sessionId: 's', turnId: 't', agentId: 'a', workspace: '/tmp' },
      toolTimeoutMs: 10_000,
      resultBudgets: { maxChars: 10_000, maxMessageChars: 4000 },
    };
    const uses = [
      { type: 'tool_use' as const, id: '1', name: 'par', input: {} },
      { type: 'tool_use' as const, id: '2', name: 'seq', input: {} },
    ];
    const gen = settleToolUses(uses, env);
    let step = await gen.next();
    while (!step.done) step = await gen.next();
    const [first, second] = step.value!;
    expect(first!.content).toBe('p'.repeat(3000));
    expect(second!.content).toMatch(/^s{1000}\n\n\[… 2000 characters omitted from offset 1000/);
  });
});

describe('runTool', () => {
  it('makes a result without text content an is_error result (nothing to budget)', async () => {
    const tool: AnyTool = { name: 'odd', description: 'odd', input: z.object({}), readOnly: true, concurrencySafe: true, call: async () => ({}) as never };
    const ctx = { signal: new AbortController().signal, toolUseId: 'u', sessionId: 's', turnId: 't', agentId: 'a', workspace: '/tmp' };
    const out = await runTool(tool, {}, ctx, 1000);
    expect(out.result).toEqual({ type: 'tool_result', tool_use_id: 'u', content: 'The tool odd failed: it returned no text content', is_error: true });
  });
});
