import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolResultBlock, ToolUseBlock } from '../src/messages.js';
import { settleBatch, settleToolUses, toolBatches, toolTimeoutFor } from '../src/tool-batch.js';
import { denialText, prepareToolUse, type ToolEnvironment } from '../src/tool-prepare.js';
import { allowAll, type AnyTool, type ToolContext } from '../src/tool.js';

const use = (id: string, name: string, input: unknown = {}): ToolUseBlock => ({ type: 'tool_use', id, name, input });

function tool(name: string, extra: Partial<AnyTool> = {}): AnyTool {
  return {
    name,
    description: name,
    input: z.object({ n: z.number().optional() }),
    readOnly: true,
    concurrencySafe: true,
    call: async (input) => ({ content: `${name}:${(input as { n?: number }).n ?? '-'}` }),
    ...extra,
  };
}

function env(tools: AnyTool[], extra: Partial<ToolEnvironment> = {}): ToolEnvironment {
  return {
    tools: new Map(tools.map((t) => [t.name, t])),
    canUseTool: allowAll,
    signal: new AbortController().signal,
    toolContext: { sessionId: 's', turnId: 't', agentId: 'a', workspace: '/tmp' },
    toolTimeoutMs: 5_000,
    ...extra,
  };
}

async function drain<R>(gen: AsyncGenerator<unknown, R, void>): Promise<{ events: Array<{ type: string; toolUseId?: string }>; value: R }> {
  const events: Array<{ type: string; toolUseId?: string }> = [];
  for (;;) {
    const r = await gen.next();
    if (r.done) return { events, value: r.value };
    events.push(r.value as { type: string; toolUseId?: string });
  }
}

describe('toolBatches', () => {
  it('groups consecutive concurrency-safe uses and puts every other use in a batch of its own', () => {
    const tools = new Map([tool('r'), tool('w', { concurrencySafe: false })].map((t) => [t.name, t]));
    const uses = [use('1', 'r'), use('2', 'r'), use('3', 'w'), use('4', 'nope'), use('5', 'r'), use('6', 'w'), use('7', 'w'), use('8', 'r'), use('9', 'r')];
    expect(toolBatches(uses, tools).map((b) => b.map((u) => u.id))).toEqual([['1', '2'], ['3'], ['4'], ['5'], ['6'], ['7'], ['8', '9']]);
    expect(toolBatches([], tools)).toEqual([]);
  });
});

describe('toolTimeoutFor', () => {
  it('uses an own per-tool entry and never an inherited Object member', () => {
    const limits = { toolTimeoutMs: 250, toolTimeouts: { slow: 60_000 } };
    expect(toolTimeoutFor('slow', limits)).toBe(60_000);
    expect(toolTimeoutFor('fast', limits)).toBe(250);
    expect(toolTimeoutFor('constructor', limits)).toBe(250);
    expect(toolTimeoutFor('toString', { toolTimeoutMs: 9 })).toBe(9);
  });
});

describe('prepareToolUse', () => {
  it('readies a permitted use with the parsed input and hands canUseTool the turn context of that use', async () => {
    const seen: ToolContext[] = [];
    const e = env([tool('r')], {
      canUseTool: async (_t, _i, ctx) => {
        seen.push(ctx);
        return { behavior: 'allow' };
      },
    });
    const prepared = await prepareToolUse(use('u1', 'r', { n: 3 }), e);
    expect(prepared).toMatchObject({ status: 'ready', input: { n: 3 } });
    expect(seen[0]).toMatchObject({ toolUseId: 'u1', turnId: 't', workspace: '/tmp' });
    expect(seen[0]!.signal).toBe(e.signal);
  });

  it('settles every failure with the is_error result the model is told, and never asks permission for an invalid use', async () => {
    let asked = 0;
    const validated = tool('v', { validateInput: async () => ({ ok: false, message: 'not today' }) });
    const e = env([tool('r'), validated], {
      canUseTool: async () => {
        asked++;
        return { behavior: 'allow' };
      },
    });
    const contentOf = async (u: ToolUseBlock) => {
      const p = await prepareToolUse(u, e);
      if (p.status !== 'settled') throw new Error(`expected ${u.id} settled`);
      expect(p.outcome.result).toMatchObject({ tool_use_id: u.id, is_error: true });
      expect(p.preset).toBe(false);
      return p.outcome.result.content;
    };
    expect(await contentOf(use('1', 'nope'))).toBe('There is no tool named "nope". Available tools: r, v.');
    expect(await contentOf(use('2', 'r', { n: 'x' }))).toMatch(/^Invalid input for r: n: /);
    expect(await contentOf(use('3', 'v'))).toBe('Invalid input for v: not today');
    expect(asked).toBe(0);
    expect(await contentOf(use('4', 'nope'))).toContain('Available tools: r, v.');
    const none = await prepareToolUse(use('5', 'x'), env([]));
    expect(none.status === 'settled' && none.outcome.result.content).toBe('There is no tool named "x". Available tools: none.');
  });

  it('words a denial by its kind', async () => {
    const deny = (kind: 'person' | 'rule') => env([tool('r')], { canUseTool: async () => ({ behavior: 'deny', reason: 'because', kind }) });
    const person = await prepareToolUse(use('1', 'r'), deny('person'));
    const rule = await prepareToolUse(use('2', 'r'), deny('rule'));
    expect(person.status === 'settled' && person.outcome.result.content).toBe(denialText('person', 'because'));
    expect(denialText('person', 'because')).toMatch(/^The person declined this tool call \(because\)\. Do not try it again/);
    expect(rule.status === 'settled' && rule.outcome.result.content).toBe(denialText('rule', 'because'));
    expect(denialText('rule', 'because')).toMatch(/^Permission denied by rule: because\. You may try another reasonable way/);
  });

  it('parses a rewritten input again, readying a valid one and settling an invalid one', async () => {
    const good = await prepareToolUse(use('1', 'r', { n: 1 }), env([tool('r')], { canUseTool: async () => ({ behavior: 'allow', updatedInput: { n: 2 } }) }));
    expect(good).toMatchObject({ status: 'ready', input: { n: 2 } });
    const bad = await prepareToolUse(
      use('2', 'r', { n: 1 }),
      env([tool('r')], { canUseTool: async () => ({ behavior: 'allow', updatedInput: { n: 'two' } }) }),
    );
    expect(bad.status === 'settled' && bad.outcome.result.content).toMatch(/^The rewritten input for r is invalid: n: /);
  });

  it('turns any throw of validateInput or canUseTool into a failed permission check', async () => {
    const throwing = (value: unknown) =>
      env([tool('r')], {
        canUseTool: async () => {
          throw value;
        },
      });
    const contentFor = async (e: ToolEnvironment) => {
      const p = await prepareToolUse(use('1', 'r'), e);
      return p.status === 'settled' ? p.outcome.result.content : 'ready';
    };
    expect(await contentFor(throwing(new Error('rules unreadable')))).toBe('The permission check for r failed: rules unreadable');
    expect(await contentFor(throwing('plain'))).toBe('The permission check for r failed: plain');
    expect(await contentFor(throwing(Object.create(null)))).toBe('The permission check for r failed: an unprintable value was thrown');
    const validateThrows = env([
      tool('r', {
        validateInput: async () => {
          throw new Error('stat failed');
        },
      }),
    ]);
    expect(await contentFor(validateThrows)).toBe('The permission check for r failed: stat failed');
  });
});

describe('settleBatch', () => {
  it('starts every ready use before any ends, ends them in request order, and skips the events of preset results', async () => {
    const preset = new Map<string, ToolResultBlock>([['p', { type: 'tool_result', tool_use_id: 'p', content: 'from before', is_error: true }]]);
    const e = env([tool('r')]);
    const { events, value } = await drain(settleBatch([use('1', 'r', { n: 1 }), use('p', 'r'), use('2', 'nope'), use('3', 'r', { n: 3 })], e, preset));
    expect(events.map((ev) => `${ev.type}:${ev.toolUseId}`)).toEqual(['tool_start:1', 'tool_start:3', 'tool_end:1', 'tool_end:2', 'tool_end:3']);
    expect(value?.map((r) => r.content)).toEqual(['r:1', 'from before', expect.stringContaining('no tool named "nope"'), 'r:3']);
  });

  it('adds afterTool text to results of calls that ran, and only to those', async () => {
    const reported: string[] = [];
    const e = env([tool('r')], {
      canUseTool: async (_t, input) => ((input as { n?: number }).n === 2 ? { behavior: 'deny', reason: 'no', kind: 'rule' } : { behavior: 'allow' }),
      afterTool: async ({ result, ctx }) => {
        reported.push(ctx.toolUseId);
        return result.content === 'r:1' ? 'hook note' : '';
      },
    });
    const { value } = await drain(settleBatch([use('1', 'r', { n: 1 }), use('2', 'r', { n: 2 }), use('3', 'r', { n: 3 })], e));
    expect(value?.map((r) => r.content)).toEqual(['r:1\n\nhook note', expect.stringContaining('Permission denied by rule'), 'r:3']);
    expect(reported.sort()).toEqual(['1', '3']);
  });

  it('carries a cut result and its full content on tool_end', async () => {
    const e = env([tool('big', { maxResultChars: 3, call: async () => ({ content: 'abcdef' }) })]);
    const { events, value } = await drain(settleBatch([use('1', 'big')], e));
    expect(events[1]).toMatchObject({ type: 'tool_end', fullContent: 'abcdef' });
    expect(value?.[0]?.content).toMatch(/^abc\n\n\[… 3 characters omitted from offset 3\. The whole result is stored with reference "1"/);
    expect(value?.[0]?.content).toMatch(/\n\n\[output cut: showing 3 of 6 characters; the full result is kept in the session store\]$/);
  });

  it('returns null without running anything when the signal fires during a preparation', async () => {
    const ac = new AbortController();
    let ran = 0;
    const e = env([tool('r', { call: async () => ({ content: String(++ran) }) })], {
      signal: ac.signal,
      canUseTool: async () => {
        ac.abort();
        return { behavior: 'allow' };
      },
    });
    const { events, value } = await drain(settleBatch([use('1', 'r'), use('2', 'r')], e));
    expect(value).toBeNull();
    expect(events).toEqual([]);
    expect(ran).toBe(0);
  });

  it('reports a batch that ran, then returns null when the signal fired while it ran', async () => {
    const ac = new AbortController();
    const stopping = tool('r', {
      call: async () => {
        ac.abort();
        return { content: 'done' };
      },
    });
    const e = env([stopping], { signal: ac.signal });
    const { events, value } = await drain(settleBatch([use('1', 'r')], e));
    expect(events.map((ev) => ev.type)).toEqual(['tool_start', 'tool_end']);
    expect(value).toBeNull();
  });

  it('rejects with what afterTool throws, before any tool_end', async () => {
    const boom = new Error('hook crashed');
    const e = env([tool('r')], {
      afterTool: async () => {
        throw boom;
      },
    });
    const events: string[] = [];
    const gen = settleBatch([use('1', 'r')], e);
    await expect(
      (async () => {
        for (let r = await gen.next(); !r.done; r = await gen.next()) events.push(r.value.type);
      })(),
    ).rejects.toBe(boom);
    expect(events).toEqual(['tool_start']);
  });
});

describe('settleToolUses', () => {
  it('settles batch after batch, returning all results in request order', async () => {
    const order: string[] = [];
    const e = env([
      tool('r', {
        call: async (i) => {
          order.push(`r${(i as { n: number }).n}`);
          return { content: 'r' };
        },
      }),
      tool('w', {
        concurrencySafe: false,
        call: async () => {
          order.push('w');
          return { content: 'w' };
        },
      }),
    ]);
    const { events, value } = await drain(settleToolUses([use('1', 'r', { n: 1 }), use('2', 'w'), use('3', 'r', { n: 3 })], e));
    expect(order).toEqual(['r1', 'w', 'r3']);
    expect(events.map((ev) => `${ev.type}:${ev.toolUseId}`)).toEqual([
      'tool_start:1',
      'tool_end:1',
      'tool_start:2',
      'tool_end:2',
      'tool_start:3',
      'tool_end:3',
    ]);
    expect(value?.map((r) => r.tool_use_id)).toEqual(['1', '2', '3']);
  });

  it('returns null before the first batch when the signal already fired, and [] for no uses', async () => {
    const ac = new AbortController();
    ac.abort();
    const { events, value } = await drain(settleToolUses([use('1', 'r')], env([tool('r')], { signal: ac.signal })));
    expect(value).toBeNull();
    expect(events).toEqual([]);
    expect((await drain(settleToolUses([], env([], { signal: ac.signal })))).value).toEqual([]);
  });
});
