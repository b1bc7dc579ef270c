import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AnyTool } from '@switchboard/agent';
import { deferredToolsBlocks, loadedNamesOf, loadedResult, oneLine, searchTools } from '../../src/index.js';

const tool = (name: string, description: string): AnyTool => ({
  name,
  description,
  input: z.object({}),
  readOnly: true,
  concurrencySafe: true,
  deferrable: true,
  call: async () => ({ content: '' }),
});

const catalog = [
  tool('mcp__github__create_issue', '[MCP server github] Creates an issue in a repository.'),
  tool('mcp__github__search_code', '[MCP server github] Searches code across repositories.'),
  tool('mcp__jira__create_issue', '[MCP server jira] Creates a Jira ticket.'),
  tool('mcp__weather__forecast', '[MCP server weather] Returns the forecast for a city.'),
];
const found = (q: string, max = 5) => searchTools(q, catalog, max).map((t) => t.name);

describe('searchTools', () => {
  it('select: takes exact names, full or without the server prefix, in order, unknown ones skipped', () => {
    expect(found('select:forecast, mcp__github__search_code,missing')).toEqual(['mcp__weather__forecast', 'mcp__github__search_code']);
    expect(found('select:forecast,forecast')).toEqual(['mcp__weather__forecast']);
    expect(found('select:')).toEqual([]);
  });

  it('an exact name finds that tool alone', () => {
    expect(found('mcp__jira__create_issue')).toEqual(['mcp__jira__create_issue']);
    // The short name of the first server that has it.
    expect(found('create_issue')).toEqual(['mcp__github__create_issue']);
  });

  it('keywords: the tools matching the most words, name matches first, then by name', () => {
    expect(found('forecast city')).toEqual(['mcp__weather__forecast']);
    expect(found('create issue')).toEqual(['mcp__github__create_issue', 'mcp__jira__create_issue']);
    expect(found('jira issue')).toEqual(['mcp__jira__create_issue']);
    expect(found('Repositories')).toEqual(['mcp__github__search_code']);
    expect(found('create issue', 1)).toEqual(['mcp__github__create_issue']);
    expect(found('nothing matches this')).toEqual([]);
    expect(found('!!!')).toEqual([]);
  });

  it('matches whole words only (7 is not 17)', () => {
    const numbered = [tool('a', 'record set 7'), tool('b', 'record set 17')];
    expect(searchTools('set 7', numbered, 5).map((t) => t.name)).toEqual(['a']);
  });
});

describe('tool_search results and the listing', () => {
  it('the loaded line round-trips; other text loads nothing', () => {
    const text = loadedResult([catalog[0]!, catalog[3]!]);
    expect(loadedNamesOf(text)).toEqual(['mcp__github__create_issue', 'mcp__weather__forecast']);
    expect(text).toContain('"input_schema"');
    expect(loadedNamesOf('No deferred tool matches "x".')).toEqual([]);
    expect(loadedNamesOf('')).toEqual([]);
    expect(loadedNamesOf('some text\ntool_search loaded: a')).toEqual([]);
  });

  it('oneLine keeps the first non-empty line, collapsed and cut', () => {
    expect(oneLine('\n  Does   a thing.\nMore detail.')).toBe('Does a thing.');
    expect(oneLine('x'.repeat(200), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(oneLine('')).toBe('');
  });

  it('lists deferred tools in name order after a line on how to load them; nothing deferred, no block', () => {
    const [block] = deferredToolsBlocks([catalog[3]!, catalog[0]!]);
    const lines = block!.text.split('\n');
    expect(lines[0]).toContain('tool_search');
    expect(lines.slice(1)).toEqual([
      '- mcp__github__create_issue: [MCP server github] Creates an issue in a repository.',
      '- mcp__weather__forecast: [MCP server weather] Returns the forecast for a city.',
    ]);
    expect(deferredToolsBlocks([])).toEqual([]);
  });
});
