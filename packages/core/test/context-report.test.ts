import {
  clearedPlaceholder,
  defaultModelSpec,
  messagesChars,
  requestChars,
  TokenEstimator,
  type Message,
  type SystemBlock,
  type ToolSpec,
} from '@switchboard/agent';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clearedSince, contextMeter, contextReport, lastCompaction, rebuildMessages, requestView, type Entry, type NewEntry } from '../src/index.js';

const spec = { ...defaultModelSpec('claude-test'), contextWindow: 50_000, outputReserve: 5_000 };
const system: SystemBlock[] = [{ type: 'text', text: 'You are a careful assistant. '.repeat(20) }];
const tools: ToolSpec[] = [
  {
    name: 'read_file',
    description: 'Reads a file of the workspace.',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
];

let seq = 0;
function entry(e: NewEntry, at = new Date('2026-12-01T20:00:00Z')): Entry {
  return { ...e, sessionId: 's1', seq: ++seq, createdAt: at };
}
const user = (text: string, turnId = 't1') => entry({ kind: 'user', turnId, payload: { content: [{ type: 'text', text }] } });
const assistant = (content: unknown[], turnId = 't1') => entry({ kind: 'assistant', turnId, payload: { content, model: 'claude-test' } });
const result = (id: string, content: string, turnId = 't1') =>
  entry({ kind: 'tool_result', turnId, payload: { result: { type: 'tool_result', tool_use_id: id, content } } });
const useBlock = (id: string) => ({ type: 'tool_use', id, name: 'read_file', input: { path: `${id}.txt` } });

/** A two-turn session: a question, a tool call with a large result, an answer; then a short exchange. */
function session(): Entry[] {
  return [
    user('please read the notes'),
    assistant([useBlock('tu1')]),
    result('tu1', 'R'.repeat(6_000)),
    assistant([{ type: 'text', text: 'The notes say hello.' }]),
    user('thanks', 't2'),
    assistant([{ type: 'text', text: 'You are welcome.' }], 't2'),
  ];
}

const byName = (r: ReturnType<typeof contextReport>) => new Map(r.consumers.map((c) => [c.name, c.tokens]));

describe('contextReport', () => {
  it("totals what the turn meter estimates for the view, over the model's window, with each consumer from its own characters", () => {
    const estimator = new TokenEstimator(4);
    const entries = session();
    const r = contextReport({ entries, system, tools, spec, estimator });
    const view = rebuildMessages(entries).messages;
    expect(r.tokens).toBe(contextMeter(spec, estimator, system, tools).estimate(view));
    expect(r).toMatchObject({ model: 'claude-test', contextWindow: 50_000, window: 45_000, messages: view.length, clearedResults: 0, lastCompaction: null });
    const c = byName(r);
    expect(c.get('system')).toBe(Math.ceil(requestChars(system, [], []) / 4));
    expect(c.get('tools')).toBe(Math.ceil(requestChars([], tools, []) / 4));
    expect(c.get('tool_results')).toBe(Math.ceil((6_000 + 12) / 4));
    expect(c.get('summary')).toBe(0);
    // Largest first: the 6,000-character result leads.
    expect(r.consumers.map((x) => x.name)).toEqual(['tool_results', 'system', 'history', 'tools', 'summary']);
    const sum = r.consumers.reduce((a, x) => a + x.tokens, 0);
    expect(sum - r.tokens).toBeGreaterThanOrEqual(0);
    expect(sum - r.tokens).toBeLessThanOrEqual(5);
  });

  it('uses the calibrated ratio: the same session reads larger on an estimator that learnt fewer characters per token', () => {
    const entries = session();
    const plain = contextReport({ entries, system, tools, spec, estimator: new TokenEstimator(4) });
    const dense = contextReport({ entries, system, tools, spec, estimator: new TokenEstimator(2) });
    expect(dense.tokens).toBeGreaterThan(plain.tokens * 1.9);
  });

  it('counts the text block carrying the last boundary summary as summary, and reports that boundary', () => {
    const summary = 'People: Ada (owner). Decisions: ship on Friday. Open tasks: none.';
    const entries = [
      ...session(),
      entry(
        { kind: 'compact', turnId: 't3', payload: { summary, throughSeq: 6, trigger: 'manual', tokensBefore: 9_000, tokensAfter: 400, model: 'claude-test' } },
        new Date('2026-12-01T21:05:30Z'),
      ),
      user('what did we decide?', 't4'),
    ];
    // The view a boundary-aware transcript gives: the summary as the first user message, then the tail.
    const view: Message[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: `Summary of the conversation so far:\n${summary}` },
          { type: 'text', text: 'what did we decide?' },
        ],
      },
    ];
    const r = contextReport({ entries, system, tools, spec, estimator: new TokenEstimator(4), view });
    expect(r.lastCompaction).toEqual({ at: '2026-12-01T21:05:30.000Z', trigger: 'manual', tokensBefore: 9_000, tokensAfter: 400 });
    const c = byName(r);
    expect(c.get('summary')).toBe(Math.ceil((`Summary of the conversation so far:\n${summary}`.length + 12) / 4));
    expect(c.get('history')).toBe(Math.ceil(('what did we decide?'.length + 12) / 4));
    expect(c.get('tool_results')).toBe(0);
    expect(r.messages).toBe(1);
  });

  it('the newest well-formed boundary wins; malformed ones are skipped', () => {
    const good = (trigger: string, tokensBefore: number) =>
      entry({ kind: 'compact', turnId: null, payload: { summary: 's', throughSeq: 1, trigger, tokensBefore, tokensAfter: 10, model: 'm' } });
    const entries = [good('auto', 100), good('reactive', 200), good('sideways', 300), entry({ kind: 'compact', turnId: null, payload: null })];
    expect(lastCompaction(entries)).toMatchObject({ trigger: 'reactive', tokensBefore: 200 });
    expect(lastCompaction([good('auto', -1), good('auto', Number.NaN)])).toBeNull();
  });
});

describe('requestView', () => {
  it('shows the results the microcompact markers after the last boundary cleared as their placeholder', () => {
    const entries = [
      ...session(),
      entry({ kind: 'microcompact', turnId: 't2', payload: { cleared: ['tu1', 42, null], tokensBefore: 2_000, tokensAfter: 300 } }),
    ];
    expect([...clearedSince(entries)]).toEqual(['tu1']);
    const view = requestView(entries);
    const results = view.flatMap((m) => m.content).filter((b) => b.type === 'tool_result');
    expect(results).toEqual([{ type: 'tool_result', tool_use_id: 'tu1', content: clearedPlaceholder({ tool_use_id: 'tu1', content: 'x'.repeat(6_000) }) }]);
    // The stored entries are not changed.
    expect((entries[2]!.payload as { result: { content: string } }).result.content).toHaveLength(6_000);
    const r = contextReport({ entries, system, tools, spec, estimator: new TokenEstimator(4) });
    expect(r.clearedResults).toBe(1);
    expect(byName(r).get('tool_results')).toBe(Math.ceil((clearedPlaceholder({ tool_use_id: 'tu1', content: 'x'.repeat(6_000) }).length + 12) / 4));
  });

  it('a boundary resets the cleared set; markers after it count again', () => {
    const marker = (ids: string[]) => entry({ kind: 'microcompact', turnId: null, payload: { cleared: ids, tokensBefore: 1, tokensAfter: 1 } });
    const boundary = entry({
      kind: 'compact',
      turnId: null,
      payload: { summary: 's', throughSeq: 1, trigger: 'auto', tokensBefore: 1, tokensAfter: 1, model: 'm' },
    });
    expect([...clearedSince([marker(['a']), boundary, marker(['b']), marker(['c', 'b'])])].sort()).toEqual(['b', 'c']);
    expect(clearedSince([marker(['a']), boundary]).size).toBe(0);
  });

  it('never throws on hostile marker and boundary payloads, and the report stays finite', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('compact', 'microcompact'), fc.anything()), { maxLength: 6 }), (markers) => {
        const entries = [...session(), ...markers.map(([kind, payload]) => entry({ kind: kind as 'compact', turnId: null, payload }))];
        const r = contextReport({ entries, system, tools, spec, estimator: new TokenEstimator() });
        expect(Number.isFinite(r.tokens)).toBe(true);
        expect(r.consumers).toHaveLength(5);
        expect(r.tokens).toBeGreaterThanOrEqual(Math.ceil(messagesChars(requestView(entries)) / 3.5));
      }),
      { numRuns: 300 },
    );
  });
});
