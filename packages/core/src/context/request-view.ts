import type { Message, UserBlock } from '@switchboard/agent';
import type { NewEntry } from '../storage.js';
import { rebuildMessages } from '../transcript.js';

/**
 * The text a cleared tool result stands for in {@link requestView} (one line with the reference,
 * so the model can page the stored whole with `read_result`).
 */
export function clearedResultText(toolUseId: string): string {
  return `[tool result cleared to save context; read_result ${toolUseId} pages the stored whole]`;
}

/**
 * The tool_use ids whose result bodies the model sees as a placeholder: the union of the
 * `microcompact` markers after the last `compact` boundary (the brief's formats). A marker whose
 * payload is not `{ cleared: string[] }` adds nothing.
 */
export function clearedToolUses(entries: readonly NewEntry[]): Set<string> {
  const cleared = new Set<string>();
  for (const e of entries) {
    if (e.kind === 'compact') cleared.clear();
    else if (e.kind === 'microcompact') {
      const ids = (e.payload as { cleared?: unknown } | null)?.cleared;
      if (!Array.isArray(ids)) continue;
      for (const id of ids) if (typeof id === 'string') cleared.add(id);
    }
  }
  return cleared;
}

/**
 * The messages the model would get next for a session, from its stored entries: what
 * {@link rebuildMessages} rebuilds (from the last compaction boundary on, once the transcript
 * knows boundaries) with the sticky microcompact cut applied — every cleared result's body
 * replaced by its placeholder. Pure; the entries are not changed.
 */
export function requestView(entries: readonly NewEntry[]): Message[] {
  const { messages } = rebuildMessages(entries);
  const cleared = clearedToolUses(entries);
  if (cleared.size === 0) return messages;
  return messages.map((m): Message => {
    if (m.role !== 'user' || !m.content.some((b) => b.type === 'tool_result' && cleared.has(b.tool_use_id))) return m;
    const content = m.content.map(
      (b): UserBlock => (b.type === 'tool_result' && cleared.has(b.tool_use_id) ? { ...b, content: clearedResultText(b.tool_use_id) } : b),
    );
    return { role: 'user', content };
  });
}
