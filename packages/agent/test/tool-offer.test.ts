import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AnyTool, offeredCall, type OfferedToModel, toolSpec } from '../src/index.js';
import { ScriptedModel } from '@switchboard/testkit';
import { loopParams, runLoop } from './loop-fixture.js';

const tool = (name: string, call: () => void = () => {}): AnyTool => ({
  name,
  description: `${name} tool`,
  input: z.object({}),
  readOnly: true,
  concurrencySafe: true,
  async call() {
    call();
    return { content: `${name} ran` };
  },
});

describe('ToolOffer (per-call tools and system blocks)', () => {
  it('offeredCall appends the offer’s system blocks after the turn’s and takes its tools', () => {
    const spec = toolSpec(tool('a'));
    const out = offeredCall([{ type: 'text', text: 'base' }], () => ({ tools: [spec], system: [{ type: 'text', text: 'listing' }] }));
    expect(out.system.map((b) => b.text)).toEqual(['base', 'listing']);
    expect(out.tools).toEqual([spec]);
  });

  it('each model call sends what the offer says at that moment; a tool left out of the offer can still be called', async () => {
    const hidden = tool('hidden');
    const loader = tool('loader', () => {
      current = { tools: [toolSpec(loader), toolSpec(hidden)], system: [] };
    });
    let current: OfferedToModel = { tools: [toolSpec(loader)], system: [{ type: 'text', text: 'hidden is deferred' }] };
    const model = new ScriptedModel([
      { content: [{ type: 'tool_use', id: '1', name: 'loader', input: {} }] },
      { content: [{ type: 'tool_use', id: '2', name: 'hidden', input: {} }] },
      { content: [{ type: 'text', text: 'done' }] },
    ]);
    const { result } = await runLoop(loopParams(model, [loader, hidden], { offer: () => current }));
    expect(result.reason).toBe('completed');
    const [first, second, third] = model.requests;
    expect(first!.tools.map((t) => t.name)).toEqual(['loader']);
    expect(first!.system.map((b) => b.text)).toEqual(['sys', 'hidden is deferred']);
    expect(second!.tools.map((t) => t.name)).toEqual(['loader', 'hidden']);
    expect(second!.system.map((b) => b.text)).toEqual(['sys']);
    const ran = third!.messages.at(-1)!.content[0] as { content: string; is_error?: boolean };
    expect(ran).toMatchObject({ content: 'hidden ran' });
    expect(ran.is_error).toBeUndefined();
  });

  it('without an offer every tool’s schema goes out with the turn’s system blocks', async () => {
    const model = new ScriptedModel([{ content: [{ type: 'text', text: 'ok' }] }]);
    await runLoop(loopParams(model, [tool('a'), tool('b')]));
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(['a', 'b']);
    expect(model.requests[0]!.system.map((b) => b.text)).toEqual(['sys']);
  });
});
