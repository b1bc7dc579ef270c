import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clearableResults, clearedPlaceholder, keptFrom, type Message, MIN_CLEARED_CHARS, microcompactView } from '../src/index.js';

const body = (n: number) => 'r'.repeat(MIN_CLEARED_CHARS + n);
const person = (t: string): Message => ({ role: 'user', content: [{ type: 'text', text: t }] });
const asks = (...ids: string[]): Message => ({ role: 'assistant', content: ids.map((id) => ({ type: 'tool_use' as const, id, name: 't', input: {} })) });
const answers = (...ids: string[]): Message => ({
  role: 'user',
  content: ids.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: body(id.length) })),
});
const says = (t: string): Message => ({ role: 'assistant', content: [{ type: 'text', text: t }] });

/** Three turns: the first two with a tool call each, the last one running a call. */
const history: Message[] = [
  person('one'),
  asks('a1'),
  answers('a1'),
  says('ok'),
  person('two'),
  asks('b1', 'b2'),
  answers('b1', 'b2'),
  says('ok'),
  person('three'),
  asks('c1'),
  answers('c1'),
];

describe('microcompact view', () => {
  it('finds where the last K turns begin', () => {
    expect(keptFrom(history, 1)).toBe(8);
    expect(keptFrom(history, 2)).toBe(4);
    expect(keptFrom(history, 3)).toBe(0);
    expect(keptFrom(history, 9)).toBe(0);
    expect(keptFrom(history, Number.NaN)).toBe(8); // at least one turn is kept
  });

  it('clears results older than the last K turns, skipping short ones', () => {
    expect(clearableResults(history, 1)).toEqual(['a1', 'b1', 'b2']);
    expect(clearableResults(history, 2)).toEqual(['a1']);
    expect(clearableResults(history, 3)).toEqual([]);
    const short: Message[] = [
      person('one'),
      asks('s'),
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 's', content: 'tiny' }] },
      says('ok'),
      person('two'),
    ];
    expect(clearableResults(short, 1)).toEqual([]);
  });

  it('replaces cleared bodies by a placeholder with the reference, keeping the pairs, is_error and unchanged messages', () => {
    const failed: Message[] = [
      person('x'),
      asks('e'),
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'e', content: body(9), is_error: true }] },
    ];
    const view = microcompactView([...history, ...failed], new Set(['a1', 'b2', 'e']));
    expect(view).toHaveLength(history.length + 3);
    expect(view[2]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'a1', content: clearedPlaceholder({ tool_use_id: 'a1', content: body(2) }) }]);
    expect(view[6]!.content[0]).toBe(history[6]!.content[0]);
    expect(view[6]!.content[1]).toMatchObject({
      tool_use_id: 'b2',
      content: expect.stringMatching(/^\[tool result cleared to save context \(\d+ characters\); reference "b2"/),
    });
    expect(view[13]!.content[0]).toMatchObject({ tool_use_id: 'e', is_error: true, content: expect.stringContaining('read_result') });
    for (const i of [0, 1, 3, 4, 5, 7, 8, 9, 10]) expect(view[i]).toBe(history[i]);
    expect(history[2]!.content[0]).toMatchObject({ content: body(2) }); // nothing mutated
  });

  it('is a function of the messages and the cleared set: the same inputs give byte-identical views (property)', () => {
    const ids = fc.constantFrom('a1', 'b1', 'b2', 'c1', 'zz');
    fc.assert(
      fc.property(fc.uniqueArray(ids), fc.integer({ min: 1, max: 5 }), (cleared, k) => {
        const once = JSON.stringify(microcompactView(history, new Set(cleared)));
        expect(JSON.stringify(microcompactView(structuredClone(history), new Set([...cleared].reverse())))).toBe(once);
        // Every tool_use keeps its tool_result, in place.
        const view = microcompactView(history, new Set([...cleared, ...clearableResults(history, k)]));
        expect(view.map((m) => m.content.map((b) => (b.type === 'tool_result' ? b.tool_use_id : b.type === 'tool_use' ? b.id : 't')))).toEqual(
          history.map((m) => m.content.map((b) => (b.type === 'tool_result' ? b.tool_use_id : b.type === 'tool_use' ? b.id : 't'))),
        );
      }),
    );
  });
});
