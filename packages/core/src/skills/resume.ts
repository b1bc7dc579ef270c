import type { NewEntry } from '../storage.js';
import { SKILL_TOOL } from './skill-run.js';

type Block = { type?: unknown; id?: unknown; name?: unknown; input?: unknown; tool_use_id?: unknown; is_error?: unknown };

const blocksOf = (payload: unknown): Block[] => {
  const content = (payload as { content?: unknown } | null)?.content;
  return Array.isArray(content) ? (content as Block[]).filter((b): b is Block => typeof b === 'object' && b !== null) : [];
};

/**
 * The skills a turn loaded so far, in order, from its stored entries: each `skill` call of the
 * turn whose result is stored and not an error. A resumed turn loads them again into its new run,
 * so a restart never lifts a skill's narrowing in the middle of a turn. Total over any payload.
 */
export function skillsLoadedInTurn(entries: readonly NewEntry[], turnId: string): string[] {
  const calls = new Map<string, string>();
  const loaded: string[] = [];
  for (const entry of entries) {
    if (entry.turnId !== turnId) continue;
    if (entry.kind === 'assistant') {
      for (const b of blocksOf(entry.payload)) {
        const name = (b.input as { name?: unknown } | null | undefined)?.name;
        if (b.type === 'tool_use' && b.name === SKILL_TOOL && typeof b.id === 'string' && typeof name === 'string') calls.set(b.id, name);
      }
    } else if (entry.kind === 'tool_result') {
      const result = (entry.payload as { result?: Block } | null)?.result;
      const name = typeof result?.tool_use_id === 'string' ? calls.get(result.tool_use_id) : undefined;
      if (name !== undefined && result?.is_error !== true) loaded.push(name);
    }
  }
  return loaded;
}
