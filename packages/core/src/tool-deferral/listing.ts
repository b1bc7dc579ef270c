import type { AnyTool, SystemBlock } from '@switchboard/agent';
import { TOOL_SEARCH } from './search.js';

/** Characters of a deferred tool's description the listing keeps at most. */
export const LISTING_DESCRIPTION_CHARS = 160;

/** A description as one line: its first non-empty line, whitespace collapsed, cut at `max` characters (with `…`). */
export function oneLine(description: string, max = LISTING_DESCRIPTION_CHARS): string {
  const line = (description.split(/\r?\n/u).find((l) => l.trim() !== '') ?? '').replace(/\s+/gu, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/**
 * The system block that lists deferred tools (name and one-line description, in name order) and
 * says how to load them; no block when nothing is deferred. It goes after the turn's other system
 * blocks, so they stay a stable cached prefix; it changes only when a schema is loaded.
 */
export function deferredToolsBlocks(deferred: readonly AnyTool[]): SystemBlock[] {
  if (deferred.length === 0) return [];
  const lines = [...deferred].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((t) => `- ${t.name}: ${oneLine(t.description)}`);
  const head =
    `Deferred tools. These tools are available, but their schemas are not loaded yet. Before calling one, call ${TOOL_SEARCH} ` +
    `with its name (or keywords) to load its schema; a loaded tool is then offered like any other for the rest of this session.`;
  return [{ type: 'text', text: `${head}\n${lines.join('\n')}` }];
}
