import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RESULT_PREVIEW, resultText, sidechainMessages, viewEntry } from '../src/transcript';

const at = '2026-12-05T10:00:00.000Z';
const entry = (kind: string, payload: unknown, extra: Record<string, unknown> = {}) => ({ seq: 1, kind, turnId: 't1', payload, createdAt: at, ...extra });

describe('transcript views', () => {
  it('keeps markup as plain text', () => {
    const v = viewEntry(entry('user', { content: [{ type: 'text', text: '<script>window.__pwned = 1</script><img src=x onerror=alert(1)>' }] }));
    expect(v.parts).toEqual([{ type: 'text', text: '<script>window.__pwned = 1</script><img src=x onerror=alert(1)>' }]);
  });

  it('shows assistant tool calls with their ids and model', () => {
    const v = viewEntry(
      entry('assistant', {
        model: 'claude-x',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'notes/a.md' } },
        ],
      }),
    );
    expect(v.model).toBe('claude-x');
    expect(v.toolUseIds).toEqual(['tu1']);
    expect(v.parts[1]).toMatchObject({ type: 'tool_use', id: 'tu1', name: 'read_file' });
    expect((v.parts[1] as { input: string }).input).toContain('notes/a.md');
  });

  it('marks when a tool ran without repeating its input', () => {
    const v = viewEntry(entry('tool_start', { toolUseId: 'tu1', name: 'read_file', input: { path: 'a' }, readOnly: true }));
    expect(v).toMatchObject({ label: 'Tool started: read_file · tu1 (read-only)', parts: [], toolUseIds: ['tu1'] });
  });

  it('cuts long tool results and says so; an error result is marked', () => {
    const long = 'x'.repeat(RESULT_PREVIEW + 10);
    const v = viewEntry(entry('tool_result', { result: { type: 'tool_result', tool_use_id: 'tu1', content: long }, fullContent: `${long}yyy` }));
    expect(v.parts[0]).toMatchObject({ type: 'tool_result', toolUseId: 'tu1', cut: true, fullLength: long.length + 3, isError: false });
    expect((v.parts[0] as { text: string }).text).toBe(`${'x'.repeat(RESULT_PREVIEW)}… (10 more characters)`);
    const e = viewEntry(
      entry('tool_result', { result: { type: 'tool_result', tool_use_id: 'tu2', content: [{ type: 'text', text: 'denied' }], is_error: true } }),
    );
    expect(e.parts[0]).toMatchObject({ text: 'denied', isError: true, cut: false });
  });

  it('draws compaction boundaries and microcompact cuts', () => {
    const c = viewEntry(entry('compact', { summary: 'We talked.', throughSeq: 12, trigger: 'manual', tokensBefore: 9000, tokensAfter: 400, model: 'm' }));
    expect(c.boundary).toBe(true);
    expect(c.label).toContain('manual');
    expect(c.label).toContain('12');
    expect(c.parts).toEqual([{ type: 'text', text: 'We talked.' }]);
    const m = viewEntry(entry('microcompact', { cleared: ['a', 'b'], tokensBefore: 10, tokensAfter: 5 }));
    expect(m).toMatchObject({ boundary: true, toolUseIds: ['a', 'b'] });
    expect(m.label).toContain('2 tool results');
  });

  it('links subagent sidechains and reads their messages', () => {
    const v = viewEntry(entry('assistant', { content: [] }, { sidechains: [{ toolUseId: 'tu9', type: 'research', description: 'look', state: 'completed' }] }));
    expect(v.sidechains).toEqual([{ toolUseId: 'tu9', type: 'research', description: 'look', state: 'completed' }]);
    expect(sidechainMessages([{ role: 'user', content: 'go' }, 5, { role: 'assistant', content: [{ type: 'text', text: 'done' }] }])).toEqual([
      { role: 'user', parts: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', parts: [{ type: 'text', text: 'done' }] },
    ]);
    expect(sidechainMessages(null)).toEqual([]);
  });

  it('result text of every content shape', () => {
    expect(resultText('a')).toBe('a');
    expect(resultText([{ type: 'text', text: 'a' }, { type: 'image' }, 3])).toBe('a\n[image]\n');
    expect(resultText(undefined)).toBe('');
  });

  it('never throws on hostile entries (property)', () => {
    const kinds = fc.constantFrom('user', 'assistant', 'tool_start', 'tool_result', 'note', 'compact', 'microcompact', 'unknown', '__proto__');
    fc.assert(
      fc.property(kinds, fc.anything({ withObjectString: true, withNullPrototype: true }), fc.anything(), (kind, payload, sidechains) => {
        const v = viewEntry({ ...entry(kind, payload), sidechains });
        for (const p of v.parts) expect(typeof (p as { text?: string; input?: string }).text === 'string' || p.type === 'tool_use').toBe(true);
      }),
    );
  });
});
