import type { SystemBlock } from './messages.js';
import type { ToolSpec } from './model.js';

/** What one model call offers: the tool schemas it sends, and system blocks after the turn's own. */
export interface OfferedToModel {
  /** The schemas sent in `tools` (they replace the specs of every `QueryParams.tools` entry). */
  tools: ToolSpec[];
  /** Appended after `QueryParams.system` (so the turn's own system blocks stay a stable prefix). */
  system: SystemBlock[];
}

/**
 * The offer of each model call, for a turn whose offer changes while it runs (deferred tool
 * schemas, which `tool_search` loads; see docs/tools.md).
 *
 * When: synchronously, before every model call of the turn (after the shapers), the first
 * included; a retry of the same call reuses what it returned.
 *
 * May: return another offer once a tool call changed it (a schema was loaded). `QueryParams.tools`
 * stays the set of tools that may be called, whatever is offered.
 *
 * Must: return equal values while nothing changed — the prompt-cache prefix (tools, then system)
 * is built from them; not throw (the query generator would throw it).
 */
export type ToolOffer = () => OfferedToModel;

/** The `system` and `tools` one model call sends under `offer`: the turn's system blocks, then the offer's. */
export function offeredCall(system: readonly SystemBlock[], offer: ToolOffer): { system: SystemBlock[]; tools: ToolSpec[] } {
  const now = offer();
  return { system: [...system, ...now.system], tools: now.tools };
}
