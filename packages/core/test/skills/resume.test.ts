import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type NewEntry, skillsLoadedInTurn } from '../../src/index.js';

const use = (id: string, name: string, input: unknown) => ({ type: 'tool_use', id, name, input });
const result = (id: string, isError = false) => ({ type: 'tool_result', tool_use_id: id, content: 'x', ...(isError ? { is_error: true } : {}) });

describe('skillsLoadedInTurn', () => {
  it('the skill calls of this turn whose stored result is not an error, in order', () => {
    const entries: NewEntry[] = [
      { kind: 'assistant', turnId: 'old', payload: { content: [use('t0', 'skill', { name: 'earlier' })] } },
      { kind: 'tool_result', turnId: 'old', payload: { result: result('t0') } },
      {
        kind: 'assistant',
        turnId: 't',
        payload: { content: [use('t1', 'skill', { name: 'b' }), use('t2', 'skill', { name: 'nope' }), use('t3', 'read_file', { name: 'x' })] },
      },
      { kind: 'tool_result', turnId: 't', payload: { result: result('t1') } },
      { kind: 'tool_result', turnId: 't', payload: { result: result('t2', true) } },
      { kind: 'tool_result', turnId: 't', payload: { result: result('t3') } },
      { kind: 'assistant', turnId: 't', payload: { content: [use('t4', 'skill', { name: 'a' }), use('t5', 'skill', { name: 'unanswered' })] } },
      { kind: 'tool_result', turnId: 't', payload: { result: result('t4') } },
    ];
    expect(skillsLoadedInTurn(entries, 't')).toEqual(['b', 'a']);
  });

  it('never throws on any stored payload', () => {
    const kind = fc.constantFrom('assistant', 'tool_result', 'user', 'tool_start');
    fc.assert(
      fc.property(fc.array(fc.record({ kind, turnId: fc.constantFrom('t', null), payload: fc.anything() }), { maxLength: 20 }), (entries) => {
        const names = skillsLoadedInTurn(entries as NewEntry[], 't');
        expect(Array.isArray(names)).toBe(true);
      }),
      { numRuns: Number(process.env.SWB_PROPERTY_RUNS ?? 200) },
    );
  });
});
