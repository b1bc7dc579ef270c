import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createReadResultTool, READ_RESULT_MAX_LENGTH, resultPage, storedResult } from '../../src/context/read-result.js';
import type { Entry } from '../../src/storage.js';

let seq = 0;
const entry = (sessionId: string, kind: string, payload: unknown): Entry =>
  ({ sessionId, seq: ++seq, kind, turnId: 't', payload, createdAt: new Date() }) as unknown as Entry;
const stored = (sessionId: string, id: string, content: string, fullContent?: string) =>
  entry(sessionId, 'tool_result', { result: { type: 'tool_result', tool_use_id: id, content }, ...(fullContent !== undefined ? { fullContent } : {}) });

const whole = 'abcdefghij'.repeat(3000);
const sessions = new Map<string, Entry[]>([
  ['mine', [stored('mine', 'toolu_big', 'abc…cut', whole), stored('mine', 'toolu_small', 'just this')]],
  ['theirs', [stored('theirs', 'toolu_secret', 'cut', 'the other session’s secret')]],
]);
const loads: string[] = [];
const tool = createReadResultTool({
  load: async (id) => {
    loads.push(id);
    return sessions.get(id) ?? [];
  },
});
const ctx = (sessionId: string) => ({ signal: new AbortController().signal, toolUseId: 'u', sessionId, turnId: 't', agentId: 'a', workspace: '/nowhere' });

describe('read_result', () => {
  it('is read-only, concurrency-safe and exempt from the result budget; its length is bounded', () => {
    expect(tool).toMatchObject({ name: 'read_result', readOnly: true, concurrencySafe: true, resultBudget: 'exempt' });
    expect(tool.input.safeParse({ reference: 'x', length: READ_RESULT_MAX_LENGTH + 1 }).success).toBe(false);
    expect(tool.input.safeParse({ reference: 'x', offset: -1 }).success).toBe(false);
    expect(tool.input.safeParse({ reference: '' }).success).toBe(false);
    expect(tool.input.safeParse({ reference: 'x', extra: 1 }).success).toBe(false);
  });

  it('pages the whole stored result of its own session', async () => {
    const page = await tool.call({ reference: 'toolu_big', offset: 12_345, length: 100 }, ctx('mine'));
    expect(page.isError).toBeUndefined();
    expect(page.content).toBe(`[read_result "toolu_big": characters 12345–12445 of 30000; next offset 12445]\n${whole.slice(12_345, 12_445)}`);
    const end = await tool.call({ reference: 'toolu_big', offset: 29_990 }, ctx('mine'));
    expect(end.content).toMatch(/characters 29990–30000 of 30000; end of the result\]\nabcdefghij$/);
    expect((await tool.call({ reference: 'toolu_small' }, ctx('mine'))).content).toMatch(/\njust this$/);
    expect((await tool.call({ reference: 'toolu_big', offset: 99_999_999 }, ctx('mine'))).content).toMatch(
      /characters 30000–30000 of 30000; end of the result\]\n$/,
    );
  });

  it('never reads another session’s result (the attack: a reference from elsewhere)', async () => {
    loads.length = 0;
    const out = await tool.call({ reference: 'toolu_secret' }, ctx('mine'));
    expect(out).toEqual({ content: 'There is no stored result with reference "toolu_secret" in this session.', isError: true });
    expect(loads).toEqual(['mine']);
  });

  it('finds nothing in hostile payloads', () => {
    const hostile = [
      entry('s', 'tool_result', null),
      entry('s', 'tool_result', 'text'),
      entry('s', 'tool_result', { result: null }),
      entry('s', 'tool_result', { result: { tool_use_id: 'x', content: 42 } }),
      entry('s', 'tool_result', JSON.parse('{"__proto__": {"result": {"tool_use_id": "x", "content": "proto"}}}')),
      entry('s', 'assistant', { result: { tool_use_id: 'x', content: 'wrong kind' } }),
    ];
    expect(storedResult(hostile, 'x')).toBeNull();
    expect(storedResult([...hostile, stored('s', 'x', 'seen', 'whole'), stored('s', 'x', 'later')], 'x')).toBe('later');
  });

  it('pages never split a surrogate pair and, page after page, give back the whole (property)', () => {
    const text = fc.string({ unit: fc.constantFrom('a', '😀', '\ud800', '\udc00', 'é'), maxLength: 400 });
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 450 }), (content, length, offset) => {
        let next = 0;
        let rebuilt = '';
        for (let guard = 0; guard < 1000 && next < content.length; guard++) {
          const page = resultPage(content, 'r', next, length);
          const header = page.slice(0, page.indexOf('\n'));
          const m = /characters (\d+)–(\d+) of (\d+)/.exec(header)!;
          expect(Number(m[1])).toBe(next);
          rebuilt += page.slice(page.indexOf('\n') + 1);
          next = Number(m[2]);
        }
        expect(rebuilt).toBe(content);
        const any = resultPage(content, 'r', offset, length);
        const slice = any.slice(any.indexOf('\n') + 1);
        const start = Number(/characters (\d+)–/.exec(any)![1]);
        expect(content.slice(start).startsWith(slice)).toBe(true);
        const first = slice.charCodeAt(0);
        expect(first >= 0xdc00 && first <= 0xdfff && start > 0 && content.charCodeAt(start - 1) >= 0xd800 && content.charCodeAt(start - 1) <= 0xdbff).toBe(
          false,
        );
      }),
    );
  });
});
