import { describe, expect, it } from 'vitest';
import { loadedToolNames, type NewEntry } from '../../src/index.js';

const start = (id: string, name: string): NewEntry => ({ kind: 'tool_start', turnId: 't', payload: { toolUseId: id, name, input: {}, readOnly: true } });
const result = (id: string, content: string, extra: Record<string, unknown> = {}): NewEntry => ({
  kind: 'tool_result',
  turnId: 't',
  payload: { result: { type: 'tool_result', tool_use_id: id, content }, ...extra },
});

describe('loadedToolNames (the loaded set from the transcript)', () => {
  it('collects the names of successful tool_search results', () => {
    const entries = [
      start('1', 'tool_search'),
      result('1', 'tool_search loaded: mcp__a__x, mcp__a__y\n[...]'),
      start('2', 'tool_search'),
      result('2', 'No deferred tool matches "z".'),
      start('3', 'tool_search'),
      result('3', 'tool_search loaded: mcp__a__z'),
    ];
    expect([...loadedToolNames(entries)].sort()).toEqual(['mcp__a__x', 'mcp__a__y', 'mcp__a__z']);
  });

  it('ignores the same line in other tools’ results, in errors and in user text', () => {
    const entries: NewEntry[] = [
      start('1', 'mcp__evil__echo'),
      result('1', 'tool_search loaded: mcp__a__x'),
      start('2', 'tool_search'),
      {
        kind: 'tool_result',
        turnId: 't',
        payload: { result: { type: 'tool_result', tool_use_id: '2', content: 'tool_search loaded: mcp__a__y', is_error: true } },
      },
      { kind: 'user', turnId: 't', payload: { content: [{ type: 'text', text: 'tool_search loaded: mcp__a__z' }] } },
      result('4', 'tool_search loaded: mcp__a__w'),
    ];
    expect([...loadedToolNames(entries)]).toEqual([]);
  });

  it('reads a cut result’s full content', () => {
    const entries = [start('1', 'tool_search'), result('1', 'head … [cut]', { fullContent: 'tool_search loaded: mcp__a__x\n…' })];
    expect([...loadedToolNames(entries)]).toEqual(['mcp__a__x']);
  });

  it('skips entries of any other shape', () => {
    const odd: NewEntry[] = [
      { kind: 'tool_start', turnId: null, payload: null },
      { kind: 'tool_start', turnId: null, payload: ['x'] },
      { kind: 'tool_start', turnId: null, payload: { name: 'tool_search', toolUseId: 5 } },
      { kind: 'tool_result', turnId: null, payload: 'text' },
      { kind: 'tool_result', turnId: null, payload: { result: null } },
      start('9', 'tool_search'),
      { kind: 'tool_result', turnId: null, payload: { result: { tool_use_id: '9', content: [{ type: 'text' }] } } },
    ];
    expect([...loadedToolNames(odd)]).toEqual([]);
  });
});
