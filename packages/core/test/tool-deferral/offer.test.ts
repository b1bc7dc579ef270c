import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AnyTool, toolSpec } from '@switchboard/agent';
import { DEFAULT_DEFERRAL, type DeferralSettings, overBudget, schemaBytes, TOOL_SEARCH, TurnToolOffer } from '../../src/index.js';

const tool = (name: string, deferrable: boolean, description = `${name} does things`): AnyTool => ({
  name,
  description,
  input: z.object({ q: z.string().describe('a query') }),
  readOnly: true,
  concurrencySafe: true,
  ...(deferrable ? { deferrable: true } : {}),
  call: async () => ({ content: name }),
});

const builtins = [tool('read_file', false), tool('exec', false)];
const mcp = (n: number) => Array.from({ length: n }, (_, i) => tool(`mcp__fx__t${String(i).padStart(2, '0')}`, true));
const settings = (over: Partial<DeferralSettings> = {}): DeferralSettings => ({ ...DEFAULT_DEFERRAL, ...over });
const names = (o: TurnToolOffer) => o.offer().tools.map((t) => t.name);

describe('deferral budget', () => {
  it('counts only deferrable tools, by count and by schema bytes', () => {
    expect(overBudget(mcp(20), settings())).toBe(false);
    expect(overBudget(mcp(21), settings())).toBe(true);
    const three = mcp(3);
    const bytes = three.reduce((n, t) => n + schemaBytes(t), 0);
    expect(overBudget(three, settings({ maxSchemaBytes: bytes }))).toBe(false);
    expect(overBudget(three, settings({ maxSchemaBytes: bytes - 1 }))).toBe(true);
    expect(overBudget(mcp(30), settings({ enabled: false }))).toBe(false);
    expect(overBudget([], settings({ maxTools: 0, maxSchemaBytes: 0 }))).toBe(false);
  });

  it('schemaBytes is the UTF-8 length of the tool as the request carries it', () => {
    const ascii = tool('x', true, 'e');
    expect(schemaBytes(ascii)).toBe(JSON.stringify(toolSpec(ascii)).length);
    expect(schemaBytes(tool('x', true, 'é'))).toBe(schemaBytes(ascii) + 1);
  });
});

describe('TurnToolOffer', () => {
  it('under the budget: every schema, no block, no tool_search', () => {
    const offer = new TurnToolOffer([...builtins, ...mcp(3)], [], settings());
    expect(offer.active).toBe(false);
    expect(offer.tools.map((t) => t.name)).not.toContain(TOOL_SEARCH);
    expect(names(offer)).toHaveLength(5);
    expect(offer.offer().system).toEqual([]);
    expect(offer.deferred()).toEqual([]);
  });

  it('over the budget: built-ins and tool_search in tools, the deferrable ones listed; stable until a load', () => {
    const tools = [...builtins, ...mcp(25)];
    const offer = new TurnToolOffer(tools, [], settings());
    expect(offer.active).toBe(true);
    expect(names(offer).sort()).toEqual(['exec', 'read_file', TOOL_SEARCH]);
    // Every tool stays callable.
    expect(offer.tools.map((t) => t.name)).toEqual([...tools.map((t) => t.name), TOOL_SEARCH]);
    const first = offer.offer();
    expect(first.system).toHaveLength(1);
    expect(first.system[0]!.text).toContain('- mcp__fx__t07: mcp__fx__t07 does things');
    expect(offer.offer()).toBe(first);
    // A second turn built the same way sends byte-identical tools and system.
    expect(JSON.stringify(new TurnToolOffer(tools, [], settings()).offer())).toBe(JSON.stringify(first));

    expect(offer.load(['mcp__fx__t07', 'nope', 'read_file'])).toEqual(['mcp__fx__t07']);
    expect(offer.load(['mcp__fx__t07'])).toEqual([]);
    const after = offer.offer();
    expect(after).not.toBe(first);
    expect(names(offer).sort()).toEqual(['exec', 'mcp__fx__t07', 'read_file', TOOL_SEARCH]);
    expect(after.tools.find((t) => t.name === 'mcp__fx__t07')?.input_schema).toMatchObject({ properties: { q: { type: 'string' } } });
    expect(after.system[0]!.text).not.toContain('mcp__fx__t07');
    expect(offer.deferred()).toHaveLength(24);
    expect(offer.loadedNames()).toEqual(['mcp__fx__t07']);
  });

  it('takes the loaded names of earlier turns, ignoring names not offered now (a pre-filter may have removed them)', () => {
    const offer = new TurnToolOffer([...builtins, ...mcp(25)], ['mcp__fx__t03', 'mcp__gone__x', 'exec'], settings());
    expect(offer.loadedNames()).toEqual(['mcp__fx__t03']);
    expect(names(offer)).toContain('mcp__fx__t03');
  });

  it('keeps tool_search offered, without a block, once everything is loaded', () => {
    const all = mcp(21);
    const offer = new TurnToolOffer(
      all,
      all.map((t) => t.name),
      settings(),
    );
    expect(offer.offer().system).toEqual([]);
    expect(names(offer)).toHaveLength(22);
    expect(names(offer)).toContain(TOOL_SEARCH);
  });

  it('never defers built-in tools however many there are', () => {
    const many = Array.from({ length: 40 }, (_, i) => tool(`builtin_${i}`, false));
    const offer = new TurnToolOffer(many, [], settings({ maxTools: 1, maxSchemaBytes: 1 }));
    expect(offer.active).toBe(false);
    expect(names(offer)).toHaveLength(40);
  });

  it('a deferrable tool that calls itself tool_search is not offered twice', () => {
    const offer = new TurnToolOffer([...mcp(21), tool(TOOL_SEARCH, true)], [], settings());
    expect(offer.tools.filter((t) => t.name === TOOL_SEARCH)).toHaveLength(1);
    expect(offer.deferred().map((t) => t.name)).not.toContain(TOOL_SEARCH);
  });

  it('tool_search loads what it finds into the offer', async () => {
    const offer = new TurnToolOffer([...builtins, ...mcp(25)], [], settings());
    const search = offer.tools.find((t) => t.name === TOOL_SEARCH)!;
    expect(search.readOnly).toBe(true);
    expect(search.concurrencySafe).toBe(true);
    const input = search.input.parse({ query: 'select:mcp__fx__t01,t02' });
    const result = await search.call(input, {
      signal: new AbortController().signal,
      toolUseId: 'u',
      sessionId: 's',
      turnId: 't',
      agentId: 'a',
      workspace: '/tmp',
    });
    expect(result.content.split('\n')[0]).toBe('tool_search loaded: mcp__fx__t01, mcp__fx__t02');
    expect(JSON.parse(result.content.slice(result.content.indexOf('\n['))).map((s: { name: string }) => s.name)).toEqual(['mcp__fx__t01', 'mcp__fx__t02']);
    expect(offer.loadedNames()).toEqual(['mcp__fx__t01', 'mcp__fx__t02']);
    expect(names(offer)).toContain('mcp__fx__t02');
  });
});
