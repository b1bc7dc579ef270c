import type { Message, ToolResultBlock } from '../messages.js';

/**
 * Microcompact (docs/context.md, "Microcompact"): past a pressure threshold, the bodies of tool
 * results older than the last K turns are replaced by a one-line placeholder naming their
 * reference (the tool_use id, which `read_result` pages). The transcript is never rewritten: the
 * view is computed from the messages and the set of cleared ids, so between two cuts it is
 * byte-identical (the prompt cache holds). Pure functions.
 */

/** The settings of microcompact (config `context.microcompact`). */
export interface MicrocompactSettings {
  /** Fraction of the window W past which a cut is made (0 < threshold ≤ 1). */
  threshold: number;
  /** The last K turns (a turn begins with a person's message) whose results stay whole (K ≥ 1). */
  keepTurns: number;
  /**
   * The least a cut must free, as a fraction of W (0 ≤ minGain < 1). A cut changes the bytes of
   * earlier messages (the prompt cache re-reads from there), so one that frees little is not
   * made: once what remains past the threshold is mostly conversation, not old results, clearing
   * one more result per call would break the cache every call for a few hundred tokens —
   * auto-compact is the step that helps then. Absent: 0.
   */
  minGain?: number;
}

/** The gateway's defaults. */
export const DEFAULT_MICROCOMPACT: MicrocompactSettings = { threshold: 0.5, keepTurns: 3, minGain: 0.1 };

/** Results this short are left alone: a placeholder would not be shorter. */
export const MIN_CLEARED_CHARS = 200;

/** The one line the model sees instead of a cleared result's body. */
export function clearedPlaceholder(result: Pick<ToolResultBlock, 'tool_use_id' | 'content'>): string {
  const ref = JSON.stringify(result.tool_use_id.slice(0, 200));
  return `[tool result cleared to save context (${result.content.length} characters); reference ${ref}: page it with read_result {"reference": ${ref}}]`;
}

/** Whether a user message begins a turn: it carries a person's text, not only tool results. */
function beginsTurn(message: Message): boolean {
  return message.role === 'user' && message.content.some((b) => b.type === 'text');
}

/**
 * The index of the first message of the last `keepTurns` turns (0 when there are no more turns
 * than that): messages before it are "older than the last K turns".
 */
export function keptFrom(messages: readonly Message[], keepTurns: number): number {
  const keep = Math.max(1, Math.floor(Number.isFinite(keepTurns) ? keepTurns : 1));
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (!beginsTurn(messages[i]!)) continue;
    seen += 1;
    if (seen === keep) return i;
  }
  return 0;
}

/**
 * The tool_use ids of the results a cut clears now: every result older than the last
 * `keepTurns` turns whose body is longer than {@link MIN_CLEARED_CHARS}, in message order.
 */
export function clearableResults(messages: readonly Message[], keepTurns: number): string[] {
  const ids: string[] = [];
  const end = keptFrom(messages, keepTurns);
  for (let i = 0; i < end; i++) {
    const message = messages[i]!;
    if (message.role !== 'user') continue;
    for (const block of message.content) {
      if (block.type === 'tool_result' && block.content.length > MIN_CLEARED_CHARS) ids.push(block.tool_use_id);
    }
  }
  return ids;
}

/**
 * The view of `messages` with the bodies of the `cleared` results replaced by their placeholder
 * ({@link clearedPlaceholder}; `is_error` and the pairing kept). Messages without a cleared
 * result are the same objects; nothing is mutated.
 */
export function microcompactView(messages: readonly Message[], cleared: ReadonlySet<string>): Message[] {
  if (cleared.size === 0) return [...messages];
  return messages.map((message) => {
    if (message.role !== 'user' || !message.content.some((b) => b.type === 'tool_result' && cleared.has(b.tool_use_id))) return message;
    return {
      role: 'user',
      content: message.content.map((b) =>
        b.type === 'tool_result' && cleared.has(b.tool_use_id) && b.content.length > MIN_CLEARED_CHARS ? { ...b, content: clearedPlaceholder(b) } : b,
      ),
    };
  });
}
