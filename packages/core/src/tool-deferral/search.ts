import { type AnyTool, type Tool, toolSpec } from '@switchboard/agent';
import { z } from 'zod';

/** The name of the tool that loads deferred schemas. */
export const TOOL_SEARCH = 'tool_search';

/** The first line of a `tool_search` result that loaded tools: this prefix, then the names, `, `-separated. */
export const LOADED_PREFIX = `${TOOL_SEARCH} loaded: `;

/** Most tools one call may ask for (`max_results`). */
const MAX_RESULTS_CAP = 20;

const toolSearchInput = z.strictObject({
  query: z.string().trim().min(1).max(500).describe('A tool name, "select:name1,name2" for exact names, or keywords that describe what the tool does'),
  max_results: z.number().int().min(1).max(MAX_RESULTS_CAP).optional().describe('How many tools to load at most (default 5)'),
});
type ToolSearchInput = z.output<typeof toolSearchInput>;

/** The words of a text, lower-cased: runs of letters and digits. */
function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A tool's name without its `mcp__<server>__` prefix. */
function shortName(name: string): string {
  const m = /^mcp__.+?__(.+)$/u.exec(name);
  return m ? m[1]! : name;
}

/**
 * The tools a query names or describes, best first, at most `max`:
 * - `select:a,b` — exactly those names (full or without the `mcp__<server>__` prefix), in that order;
 * - a query equal to a tool's name (full or short) — that tool;
 * - otherwise keywords: a tool matches a word when its name or description holds that word; the
 *   tools matching the most distinct words (at least one) come first, a name match before a
 *   description-only match, then by name. Only tools matching as many words as the best do count.
 */
export function searchTools(query: string, candidates: readonly AnyTool[], max: number): AnyTool[] {
  const q = query.trim();
  const byName = (name: string) => candidates.find((t) => t.name === name) ?? candidates.find((t) => shortName(t.name) === name);
  if (q.toLowerCase().startsWith('select:')) {
    const picked: AnyTool[] = [];
    for (const part of q.slice('select:'.length).split(',')) {
      const tool = byName(part.trim());
      if (tool && !picked.includes(tool)) picked.push(tool);
    }
    return picked.slice(0, max);
  }
  const exact = byName(q);
  if (exact) return [exact];
  const terms = [...new Set(words(q))];
  if (terms.length === 0) return [];
  const scored = candidates.map((tool) => {
    const nameWords = new Set(words(tool.name));
    const descWords = new Set(words(tool.description));
    let matched = 0;
    let inName = 0;
    for (const term of terms) {
      if (nameWords.has(term)) {
        matched++;
        inName++;
      } else if (descWords.has(term)) matched++;
    }
    return { tool, matched, inName };
  });
  const best = Math.max(0, ...scored.map((s) => s.matched));
  if (best === 0) return [];
  return scored
    .filter((s) => s.matched === best)
    .sort((a, b) => b.inName - a.inName || (a.tool.name < b.tool.name ? -1 : a.tool.name > b.tool.name ? 1 : 0))
    .slice(0, max)
    .map((s) => s.tool);
}

/** The text of a `tool_search` result that loaded `tools`: the {@link LOADED_PREFIX} line, then their schemas as JSON. */
export function loadedResult(tools: readonly AnyTool[]): string {
  const names = tools.map((t) => t.name).join(', ');
  const schemas = JSON.stringify(tools.map(toolSpec), null, 1);
  return `${LOADED_PREFIX}${names}\nThese tools are now offered with their full schemas, for the rest of this session; call them like any other tool.\n${schemas}`;
}

/** The names a `tool_search` result loaded (its first line); empty when it loaded none. */
export function loadedNamesOf(content: string): string[] {
  const end = content.indexOf('\n');
  const first = end < 0 ? content : content.slice(0, end);
  if (!first.startsWith(LOADED_PREFIX)) return [];
  return first
    .slice(LOADED_PREFIX.length)
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
}

/** What {@link toolSearchTool} works with. */
export interface ToolSearchOptions {
  /** Every deferrable tool of the turn (loaded or not), in name order. */
  candidates: readonly AnyTool[];
  /** Default of `max_results`. */
  maxResults: number;
  /** Loads these names into the turn's offer (see `TurnToolOffer.load`). */
  load(names: readonly string[]): string[];
}

/**
 * `tool_search` (read-only, concurrency-safe): finds deferrable tools by name or keywords
 * ({@link searchTools}), loads them into the turn's offer — from the next model call on they are
 * ordinary `tools` entries — and returns their full schemas. Its result's first line names what
 * it loaded ({@link LOADED_PREFIX}): the session's later turns derive the loaded set from it.
 */
export function toolSearchTool(options: ToolSearchOptions): Tool<ToolSearchInput> {
  return {
    name: TOOL_SEARCH,
    description:
      'Loads the full schemas of deferred tools (listed by name in the system prompt) so they can be called. ' +
      'Query by exact name, "select:name1,name2", or keywords; the matching tools are offered from the next step on, for the rest of the session.',
    input: toolSearchInput,
    readOnly: true,
    concurrencySafe: true,
    ruleContent: (input) => input.query,
    async call(input) {
      const found = searchTools(input.query, options.candidates, input.max_results ?? options.maxResults);
      if (found.length === 0) {
        return { content: `No deferred tool matches "${input.query}". Try the exact name from the deferred tools list, or other keywords.` };
      }
      options.load(found.map((t) => t.name));
      return { content: loadedResult(found) };
    },
  };
}
