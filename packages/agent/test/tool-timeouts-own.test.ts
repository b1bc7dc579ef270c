import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { allowAll, query, type AnyTool, type ToolResultBlock } from '../src/index.js';
import { ScriptedModel } from '@switchboard/testkit';

// A tool (an MCP server names its own) called like an Object member must get toolTimeoutMs, not
// the inherited member a plain `toolTimeouts[name]` would find.
const INHERITED = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];

describe('per-tool timeouts are looked up as own properties', () => {
  it('a tool named like an Object member times out after toolTimeoutMs', async () => {
    for (const name of INHERITED) {
      // Finishes only when aborted: the timeout (a config duration, 250 ms) is the event awaited.
      const tool: AnyTool = {
        name,
        description: 'waits until stopped',
        input: z.object({}),
        readOnly: true,
        concurrencySafe: true,
        call: (_input, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })),
      };
      const model = new ScriptedModel([{ content: [{ type: 'tool_use', id: 't1', name, input: {} }] }, { content: [{ type: 'text', text: 'done' }] }]);
      const gen = query({
        model,
        modelName: 'm',
        maxTokens: 100,
        system: [{ type: 'text', text: 'sys' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
        tools: [tool],
        canUseTool: allowAll,
        signal: new AbortController().signal,
        maxTurns: 5,
        toolContext: { sessionId: 's', turnId: 't', agentId: 'a', workspace: '/tmp' },
        toolTimeoutMs: 250,
        toolTimeouts: { other_tool: 60_000 },
        retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 },
        maxContinuations: 0,
        sleep: async () => {},
      });
      for (let r = await gen.next(); !r.done; r = await gen.next());
      const result = model.requests[1]!.messages.at(-1)!.content[0] as ToolResultBlock;
      expect(result.is_error, name).toBe(true);
      expect(result.content, name).toBe(`The tool ${name} did not finish within 250 ms and was stopped.`);
    }
  });
});
