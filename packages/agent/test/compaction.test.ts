import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chooseCut,
  compactedHistory,
  dropOldestTurns,
  type Message,
  messagesChars,
  SUMMARY_PREFIX,
  SUMMARY_REQUEST_MARKER,
  summaryRequest,
  turnStarts,
} from '../src/index.js';

/** A conversation of `turns`: each a user text, some tool rounds (tool_use then its results), a final text. */
function conversation(turns: readonly { text: string; rounds: number[] }[]): Message[] {
  const messages: Message[] = [];
  let id = 0;
  for (const [t, turn] of turns.entries()) {
    messages.push({ role: 'user', content: [{ type: 'text', text: `q${t} ${turn.text}` }] });
    for (const uses of turn.rounds) {
      const ids = Array.from({ length: uses }, () => `toolu_${++id}`);
      messages.push({ role: 'assistant', content: ids.map((i) => ({ type: 'tool_use', id: i, name: 'read_file', input: { path: i } })) });
      messages.push({ role: 'user', content: ids.map((i) => ({ type: 'tool_result', tool_use_id: i, content: `body of ${i} ${turn.text}` })) });
    }
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `a${t}` }] });
  }
  return messages;
}

const turnArb = fc.record({ text: fc.string({ maxLength: 60 }), rounds: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 3 }) });
const convArb = fc.array(turnArb, { minLength: 1, maxLength: 12 }).map(conversation);
const size = (messages: readonly Message[]) => messagesChars(messages);

/** Every tool_result in `messages` answers a tool_use of the message right before it. */
function pairsIntact(messages: readonly Message[]): boolean {
  return messages.every((m, i) => {
    if (m.role !== 'user') return true;
    const prev = messages[i - 1];
    const uses = new Set(prev?.role === 'assistant' ? prev.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : []);
    return m.content.every((b) => b.type !== 'tool_result' || uses.has(b.tool_use_id));
  });
}

function alternates(messages: readonly Message[]): boolean {
  return messages.every((m, i) => (i === 0 ? m.role === 'user' : m.role !== messages[i - 1]!.role));
}

describe('compaction: choosing the cut point', () => {
  it('keeps the last K turns, cutting at a turn start so no tool_use loses its result', () => {
    fc.assert(
      fc.property(convArb, fc.integer({ min: 1, max: 4 }), (messages, keepTurns) => {
        const cut = chooseCut(messages, { keepTurns, maxTailTokens: Number.POSITIVE_INFINITY, tokens: size });
        const starts = turnStarts(messages);
        if (starts.length <= keepTurns) return cut === (starts.length > 1 ? starts[1] : null);
        expect(cut).toBe(starts[starts.length - keepTurns]);
        const tail = messages.slice(cut!);
        expect(turnStarts(tail)).toHaveLength(keepTurns);
        expect(pairsIntact(tail)).toBe(true);
        return true;
      }),
    );
  });

  it('keeps fewer turns when the last K alone are too big, down to the last turn', () => {
    const messages = conversation([
      { text: 'a', rounds: [] },
      { text: 'b'.repeat(5_000), rounds: [2] },
      { text: 'c', rounds: [1] },
    ]);
    const starts = turnStarts(messages);
    expect(chooseCut(messages, { keepTurns: 2, maxTailTokens: Number.POSITIVE_INFINITY, tokens: size })).toBe(starts[1]);
    expect(chooseCut(messages, { keepTurns: 2, maxTailTokens: 1_000, tokens: size })).toBe(starts[2]);
    // Even the last turn is too big: it is still the cut (the smallest tail there is).
    expect(chooseCut(messages, { keepTurns: 2, maxTailTokens: 1, tokens: size })).toBe(starts[2]);
  });

  it('has nothing to cut in a single turn, however long', () => {
    expect(chooseCut(conversation([{ text: 'x'.repeat(10_000), rounds: [3, 3] }]), { keepTurns: 2, maxTailTokens: 10, tokens: size })).toBeNull();
  });
});

describe('compaction: the summary request', () => {
  it('is one tool-free user message with the instruction, the person’s instructions and the serialized conversation, within its bound', () => {
    fc.assert(
      fc.property(
        convArb,
        fc.integer({ min: 1_000, max: 20_000 }),
        fc.option(fc.string({ minLength: 1, maxLength: 80 }), { nil: undefined }),
        (head, maxChars, instructions) => {
          const [request, ...rest] = summaryRequest(head, { maxChars, ...(instructions ? { instructions } : {}) });
          expect(rest).toEqual([]);
          expect(request!.role).toBe('user');
          expect(request!.content.every((b) => b.type === 'text')).toBe(true);
          const text = (request!.content[0] as { text: string }).text;
          expect(text.startsWith(SUMMARY_REQUEST_MARKER)).toBe(true);
          if (instructions?.trim()) expect(text).toContain(instructions.trim());
          const body = text.slice(text.indexOf('<conversation>'));
          expect(body.length).toBeLessThan(maxChars + 200);
        },
      ),
    );
  });

  it('names tool calls and results in the text and clips a huge result to its head and tail', () => {
    const head: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'read it' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { path: 'notes.md' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: `START${'x'.repeat(50_000)}END` }] },
    ];
    const text = (summaryRequest(head, { maxChars: 100_000, blockChars: 1_000 })[0]!.content[0] as { text: string }).text;
    expect(text).toContain('[called tool read_file with {"path":"notes.md"}]');
    expect(text).toContain('START');
    expect(text).toContain('END]');
    expect(text).toContain('characters omitted');
    expect(text.length).toBeLessThan(3_000);
  });
});

describe('compaction: the history after a boundary', () => {
  it('opens with the summary as a user message and alternates roles, pairs intact', () => {
    fc.assert(
      fc.property(convArb, fc.string({ maxLength: 100 }), (messages, summary) => {
        const cut = chooseCut(messages, { keepTurns: 2, maxTailTokens: Number.POSITIVE_INFINITY, tokens: size });
        fc.pre(cut !== null);
        const next = compactedHistory(summary, messages.slice(cut!));
        expect(next[0]!.content[0]).toEqual({ type: 'text', text: `${SUMMARY_PREFIX}\n\n${summary}` });
        expect(alternates(next)).toBe(true);
        expect(pairsIntact(next)).toBe(true);
        expect(next.length).toBe(messages.length - cut!);
      }),
    );
  });
});

describe('compaction: dropping the oldest turns (reactive last resort)', () => {
  it('drops the fewest oldest turns that make it fit, keeps the last turn, never splits a pair', () => {
    fc.assert(
      fc.property(convArb, fc.integer({ min: 1, max: 5_000 }), (messages, maxTokens) => {
        const dropped = dropOldestTurns(messages, maxTokens, size);
        const starts = turnStarts(messages);
        if (starts.length < 2) return dropped === null;
        const tail = messages.slice(dropped!.cut);
        expect(starts).toContain(dropped!.cut);
        expect(pairsIntact(tail)).toBe(true);
        expect(dropped!.turns).toBe(starts.indexOf(dropped!.cut));
        // Fits, or is the last turn alone; and one turn fewer dropped would not have fitted.
        expect(size(tail) <= maxTokens || dropped!.cut === starts.at(-1)).toBe(true);
        const previous = starts[starts.indexOf(dropped!.cut) - 1]!;
        if (previous > 0) expect(size(messages.slice(previous))).toBeGreaterThan(maxTokens);
        return true;
      }),
    );
  });
});
