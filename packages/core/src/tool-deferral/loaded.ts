import type { NewEntry } from '../storage.js';
import { loadedNamesOf, TOOL_SEARCH } from './search.js';

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/**
 * The tool names a session's `tool_search` calls loaded, derived from its transcript (no table of
 * its own): the results of calls recorded as `tool_search` starts that are not errors, by their
 * first line (`tool_search loaded: a, b`). The transcript as the model's view loads it — from the
 * last compaction boundary on — so a compaction forgets the loaded set (the model loads again).
 * Total: entries of any shape are skipped.
 */
export function loadedToolNames(entries: readonly NewEntry[]): Set<string> {
  const searches = new Set<string>();
  const loaded = new Set<string>();
  for (const entry of entries) {
    const payload = record(entry.payload);
    if (!payload) continue;
    if (entry.kind === 'tool_start') {
      if (payload.name === TOOL_SEARCH && typeof payload.toolUseId === 'string') searches.add(payload.toolUseId);
      continue;
    }
    if (entry.kind !== 'tool_result') continue;
    const result = record(payload.result);
    if (!result || typeof result.tool_use_id !== 'string' || !searches.has(result.tool_use_id) || result.is_error === true) continue;
    const content = typeof payload.fullContent === 'string' ? payload.fullContent : result.content;
    if (typeof content !== 'string') continue;
    for (const name of loadedNamesOf(content)) loaded.add(name);
  }
  return loaded;
}
