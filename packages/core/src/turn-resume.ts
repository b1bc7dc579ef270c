import { toolUses, type Message, type ToolResultBlock } from '@switchboard/agent';
import type { NewEntry } from './storage.js';
import { TASK_TOOL } from './tool-status.js';
import { rebuildMessages, type ToolStartPayload } from './transcript.js';

/** Where a turn starts from: the model's view of its history and what a restart left behind. */
export interface TurnStart {
  /** The history for the model. */
  messages: Message[];
  /** Results the loop must not produce again (stored, or written for calls cut off by a restart). */
  preset: Map<string, ToolResultBlock>;
  /** Entries to store: an error result for every side-effecting call a restart cut off. */
  interrupted: NewEntry[];
  /** The turn's answer is stored complete (a resumed turn): it only needs delivering. */
  answered: boolean;
}

/**
 * Reads where a turn stands in its session's transcript. For a resumed turn: a stored complete
 * answer is only delivered; tool calls with stored results keep them; a call that started and is
 * not read-only gets an `is_error` "unknown whether it completed" result (it is never run twice);
 * read-only and never-started calls run again.
 */
export function turnStart(entries: readonly NewEntry[], turnId: string, resumed: boolean): TurnStart {
  const rebuilt = rebuildMessages(entries);
  const preset = new Map<string, ToolResultBlock>();
  const interrupted: NewEntry[] = [];
  const lastOfTurn = entries.filter((e) => e.turnId === turnId).at(-1);
  const answered = resumed && lastOfTurn?.kind === 'assistant' && !rebuilt.open;
  if (rebuilt.open) {
    for (const use of toolUses(rebuilt.open.message)) {
      const known = rebuilt.open.results.get(use.id);
      if (known) {
        preset.set(use.id, known);
        continue;
      }
      const start: ToolStartPayload | undefined = rebuilt.open.started.get(use.id);
      if (start && !start.readOnly) {
        const result: ToolResultBlock = {
          type: 'tool_result',
          tool_use_id: use.id,
          content: interruptedText(use.name),
          is_error: true,
        };
        preset.set(use.id, result);
        interrupted.push({ kind: 'tool_result', turnId, payload: { result } });
      }
    }
  }
  return { messages: rebuilt.messages, preset, interrupted, answered };
}

/** The result of a side-effecting call a restart cut off; a subagent (`task`) is never run again. */
function interruptedText(name: string): string {
  if (name === TASK_TOOL) {
    return 'The gateway restarted while this task was running: the subagent was interrupted and will not run again, so it is unknown how much of its task it did. Check its effects before retrying.';
  }
  return `The gateway restarted while ${name} was running, so it is unknown whether it completed. Check its effects before retrying.`;
}

/** After a user abort: an error result for every unanswered tool_use, so the history stays valid. */
export function danglingResults(entries: readonly NewEntry[], turnId: string): NewEntry[] {
  const open = rebuildMessages(entries).open;
  if (!open) return [];
  return toolUses(open.message)
    .filter((u) => !open.results.has(u.id))
    .map((u) => ({
      kind: 'tool_result',
      turnId,
      payload: { result: { type: 'tool_result', tool_use_id: u.id, content: 'The turn was stopped before this tool call finished.', is_error: true } },
    }));
}
