import type { TurnEvent } from '@switchboard/core';
import { describe, expect, it } from 'vitest';
import { type ToolCallbackBody, ToolCallbacks } from '../src/tool-callbacks.js';

type ToolEvent = Extract<TurnEvent, { type: 'tool_start' | 'tool_progress' | 'tool_end' }>;

/** A conversation queue that holds callbacks until `drain()` reads them, like a busy callback endpoint. */
function heldQueue() {
  const queued: Array<{ id: string; body: () => ToolCallbackBody }> = [];
  const sent: Array<{ id: string } & ToolCallbackBody> = [];
  return {
    queued,
    sent,
    queue: (id: string, body: () => ToolCallbackBody) => void queued.push({ id, body }),
    drain() {
      for (const q of queued.splice(0)) sent.push({ id: q.id, ...q.body() });
    },
  };
}

const progress = (i: number): ToolEvent => ({
  type: 'tool_progress',
  toolUseId: 'u1',
  name: 'exec',
  message: `${i} lines so far`,
  lines: i,
  elapsedMs: i * 10,
});

describe('ToolCallbacks', () => {
  it('sends start and end once, and coalesces progress while one is waiting in the queue', () => {
    const q = heldQueue();
    const tools = new ToolCallbacks('turn1', 'msg-1', q.queue, (t) => t.replaceAll('hunter2hunter2', '[redacted]'));
    tools.on({ type: 'tool_start', toolUseId: 'u1', name: 'exec', input: { command: 'deploy --to hunter2hunter2; rm x' }, readOnly: false });
    for (let i = 1; i <= 500; i++) tools.on(progress(i));
    expect(q.queued.map((c) => c.id)).toEqual(['turn1:tool:u1:start', 'turn1:tool:u1:progress:1']);
    q.drain();
    // The next report after the waiting one was sent queues a new progress callback.
    tools.on(progress(501));
    tools.on(progress(502));
    tools.on({ type: 'tool_end', toolUseId: 'u1', name: 'exec', result: { type: 'tool_result', tool_use_id: 'u1', content: 'boom', is_error: true } });
    q.drain();
    expect(q.sent).toEqual([
      {
        id: 'turn1:tool:u1:start',
        type: 'tool',
        turnId: 'turn1',
        replyTo: 'msg-1',
        toolUseId: 'u1',
        name: 'exec',
        phase: 'start',
        summary: 'deploy --to [redacted]',
      },
      {
        id: 'turn1:tool:u1:progress:1',
        type: 'tool',
        turnId: 'turn1',
        replyTo: 'msg-1',
        toolUseId: 'u1',
        name: 'exec',
        phase: 'progress',
        summary: 'deploy --to [redacted]',
        message: '500 lines so far',
        lines: 500,
        elapsedMs: 5000,
      },
      {
        id: 'turn1:tool:u1:progress:2',
        type: 'tool',
        turnId: 'turn1',
        replyTo: 'msg-1',
        toolUseId: 'u1',
        name: 'exec',
        phase: 'progress',
        summary: 'deploy --to [redacted]',
        message: '502 lines so far',
        lines: 502,
        elapsedMs: 5020,
      },
      {
        id: 'turn1:tool:u1:end',
        type: 'tool',
        turnId: 'turn1',
        replyTo: 'msg-1',
        toolUseId: 'u1',
        name: 'exec',
        phase: 'end',
        summary: 'deploy --to [redacted]',
        isError: true,
      },
    ]);
  });

  it('reports an end without a start (a refused call) with an empty summary, and shows nothing of other tools’ input', () => {
    const q = heldQueue();
    const tools = new ToolCallbacks('t', null, q.queue);
    tools.on({ type: 'tool_start', toolUseId: 'a', name: 'mcp__crm__lookup', input: { email: 'ada@example.com' }, readOnly: true });
    tools.on({ type: 'tool_end', toolUseId: 'b', name: 'write_file', result: { type: 'tool_result', tool_use_id: 'b', content: 'denied', is_error: true } });
    q.drain();
    expect(q.sent.map((c) => [c.phase, c.name, c.summary, c.isError])).toEqual([
      ['start', 'mcp__crm__lookup', '', undefined],
      ['end', 'write_file', '', true],
    ]);
    expect(JSON.stringify(q.sent)).not.toContain('ada@example.com');
  });
});
