import { toolUses, type AgentEvent } from '@switchboard/agent';
import type { Logger } from 'pino';
import { ownValue } from './own.js';
import type { NewEntry, TurnUsage } from './storage.js';

/** A usage record with nothing counted yet. */
export function emptyUsage(): TurnUsage {
  return { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, models: {}, retries: 0, fallbackUsed: false };
}

/** Adds one loop event's usage facts to the turn's usage record. */
export function countUsage(u: TurnUsage, ev: AgentEvent): void {
  if (ev.type === 'usage') {
    u.inputTokens += ev.usage.inputTokens;
    u.outputTokens += ev.usage.outputTokens;
    u.cacheReadInputTokens += ev.usage.cacheReadInputTokens;
    u.cacheCreationInputTokens += ev.usage.cacheCreationInputTokens;
    let m = ownValue(u.models, ev.model);
    if (!m) {
      m = { calls: 0, inputTokens: 0, outputTokens: 0 };
      // defineProperty: a model named "__proto__" becomes an entry, not the record's prototype.
      Object.defineProperty(u.models, ev.model, { value: m, enumerable: true, writable: true, configurable: true });
    }
    m.calls++;
    m.inputTokens += ev.usage.inputTokens;
    m.outputTokens += ev.usage.outputTokens;
  } else if (ev.type === 'model_retry') {
    if (ev.fallback) u.fallbackUsed = true;
    else u.retries++;
  }
}

/** The transcript entry a loop event is stored as; null for events that are not stored. */
export function entryOf(ev: AgentEvent, turnId: string): NewEntry | null {
  switch (ev.type) {
    case 'assistant_message':
      return { kind: 'assistant', turnId, payload: { content: ev.message.content, model: ev.model } };
    case 'user_message':
      return { kind: 'user', turnId, payload: { content: ev.message.content } };
    case 'tool_start':
      return { kind: 'tool_start', turnId, payload: { toolUseId: ev.toolUseId, name: ev.name, input: ev.input, readOnly: ev.readOnly } };
    case 'tool_end':
      return { kind: 'tool_result', turnId, payload: { result: ev.result, ...(ev.fullContent !== undefined ? { fullContent: ev.fullContent } : {}) } };
    default:
      return null;
  }
}

/**
 * Decides which loop events a crash-resume needs stored before the loop goes on (the rest wait
 * for the turn's end, and a crash before it re-runs them):
 * - an assistant message with tool calls: permission checks (approvals, which outlive a restart)
 *   and tool runs follow, and a resume must continue from exactly these calls;
 * - the start of a tool that is not read-only: a restart must know a side effect may have begun;
 * - the result of such a tool: a restart must not report a finished side effect as unknown.
 * Read-only calls and plain text answers are safe to repeat.
 */
export class DurabilityRule {
  private readonly sideEffects = new Set<string>();

  /** Whether `ev`'s entry (and everything before it) must be durable before the loop continues. */
  needsFlush(ev: AgentEvent): boolean {
    switch (ev.type) {
      case 'assistant_message':
        return toolUses(ev.message).length > 0;
      case 'tool_start':
        if (ev.readOnly) return false;
        this.sideEffects.add(ev.toolUseId);
        return true;
      case 'tool_end':
        return this.sideEffects.delete(ev.toolUseId);
      default:
        return false;
    }
  }
}

/** Logs the loop events that are only logged (retries, usage). */
export function logLoopEvent(ev: AgentEvent, log: Logger): void {
  if (ev.type === 'model_retry') {
    if (ev.fallback) log.warn({ model: ev.model, error: ev.error }, 'retry budget spent: switching to the fallback model');
    else log.warn({ attempt: ev.attempt, delayMs: ev.delayMs, model: ev.model, error: ev.error }, 'model call retried');
  } else if (ev.type === 'usage') {
    log.debug({ usage: ev.usage, model: ev.model }, 'model usage');
  }
}
