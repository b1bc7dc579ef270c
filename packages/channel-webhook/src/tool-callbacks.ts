import { summarizeProgress, summarizeToolInput, type TextScrub, type TurnEvent } from '@switchboard/core';
import type { ToolCallback } from './wire.js';

/** A tool callback's body, without the fields every callback carries. */
export type ToolCallbackBody = Omit<ToolCallback, 'id' | 'account' | 'conversation'>;

/** Queues one tool callback behind the conversation's earlier callbacks; `body` is read when its turn to be sent comes. */
export type QueueToolCallback = (id: string, body: () => ToolCallbackBody) => void;

type ToolEvent = Extract<TurnEvent, { type: 'tool_start' | 'tool_progress' | 'tool_end' }>;

/**
 * Turns one turn's tool events into `tool` callbacks: `start` and `end` once per call, and
 * `progress` coalesced per call — while a progress callback waits in the conversation's queue,
 * newer reports replace its content instead of queueing more, so a flood of progress events sends
 * at most one callback per delivery round trip. Summaries are the same scrubbed ones the chat
 * drafts show (`summarizeToolInput`).
 */
export class ToolCallbacks {
  /** The newest progress not yet sent, by tool-use id (a `Map`: ids come from the model). */
  private readonly waiting = new Map<string, ToolCallbackBody>();
  private readonly summaries = new Map<string, string>();
  private progressSeq = 0;

  constructor(
    private readonly turnId: string,
    private readonly replyTo: string | null,
    private readonly queue: QueueToolCallback,
    private readonly scrub?: TextScrub,
  ) {}

  /** Takes one tool event; never throws. */
  on(ev: ToolEvent): void {
    const base = { type: 'tool' as const, turnId: this.turnId, replyTo: this.replyTo, toolUseId: ev.toolUseId, name: ev.name };
    switch (ev.type) {
      case 'tool_start': {
        const summary = summarizeToolInput(ev.name, ev.input, this.scrub);
        this.summaries.set(ev.toolUseId, summary);
        const body: ToolCallbackBody = { ...base, phase: 'start', summary };
        this.queue(`${this.turnId}:tool:${ev.toolUseId}:start`, () => body);
        return;
      }
      case 'tool_progress': {
        const body: ToolCallbackBody = {
          ...base,
          phase: 'progress',
          summary: this.summaries.get(ev.toolUseId) ?? '',
          message: summarizeProgress(ev.message, this.scrub),
          ...(ev.lines !== undefined ? { lines: ev.lines } : {}),
          ...(ev.elapsedMs !== undefined ? { elapsedMs: ev.elapsedMs } : {}),
        };
        const queued = this.waiting.has(ev.toolUseId);
        this.waiting.set(ev.toolUseId, body);
        if (queued) return;
        this.queue(`${this.turnId}:tool:${ev.toolUseId}:progress:${++this.progressSeq}`, () => {
          const latest = this.waiting.get(ev.toolUseId) ?? body;
          this.waiting.delete(ev.toolUseId);
          return latest;
        });
        return;
      }
      case 'tool_end': {
        const body: ToolCallbackBody = {
          ...base,
          phase: 'end',
          summary: this.summaries.get(ev.toolUseId) ?? '',
          ...(ev.result.is_error ? { isError: true } : {}),
        };
        this.queue(`${this.turnId}:tool:${ev.toolUseId}:end`, () => body);
        return;
      }
    }
  }
}
