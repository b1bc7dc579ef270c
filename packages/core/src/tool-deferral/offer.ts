import { type AnyTool, type OfferedToModel, type SystemBlock, toolSpec } from '@switchboard/agent';
import { deferredToolsBlocks } from './listing.js';
import { toolSearchTool, TOOL_SEARCH } from './search.js';

/** `tools.deferral`: when deferrable tools go out as name and description only (docs/tools.md). */
export interface DeferralSettings {
  /** Off: every offered tool's schema goes out on every call. */
  enabled: boolean;
  /** Defer once the deferrable tools' schemas (JSON, UTF-8 bytes) add up to more than this… */
  maxSchemaBytes: number;
  /** …or once more than this many deferrable tools are offered. */
  maxTools: number;
  /** Tools one `tool_search` call returns (and loads) at most. */
  maxResults: number;
}

export const DEFAULT_DEFERRAL: DeferralSettings = Object.freeze({ enabled: true, maxSchemaBytes: 8192, maxTools: 20, maxResults: 5 });

/** The bytes a tool's schema takes in a request's `tools` (name, description and input schema as JSON). */
export function schemaBytes(tool: AnyTool): number {
  return Buffer.byteLength(JSON.stringify(toolSpec(tool)), 'utf8');
}

/** Whether these deferrable tools are over the budget (so they are deferred). */
export function overBudget(deferrable: readonly AnyTool[], settings: DeferralSettings): boolean {
  if (!settings.enabled || deferrable.length === 0) return false;
  if (deferrable.length > settings.maxTools) return true;
  let total = 0;
  for (const tool of deferrable) total += schemaBytes(tool);
  return total > settings.maxSchemaBytes;
}

const byName = (a: AnyTool, b: AnyTool) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * One turn's tool offer under deferral. Built from the turn's offered tools (after the policy's
 * pre-filter) and the names its session loaded before (see `loadedToolNames`). When the
 * deferrable tools among them are over the budget, the model is sent the schemas of the other
 * tools, of the loaded ones and of `tool_search`, and the rest are listed by name and one-line
 * description in a system block after the turn's own; `tool_search` loads more. Otherwise the
 * offer is every tool's schema and no block. {@link offer} returns the very same value until a
 * load changes it, so the prompt-cache prefix changes only then.
 */
export class TurnToolOffer {
  /** Whether deferral is in force for this turn (then `tool_search` is offered). */
  readonly active: boolean;
  /** The tools the model may call: the offered ones, and `tool_search` when {@link active}. */
  readonly tools: AnyTool[];
  private readonly deferrable: readonly AnyTool[];
  private readonly loaded = new Set<string>();
  private current: OfferedToModel | null = null;

  constructor(offered: readonly AnyTool[], loadedNames: Iterable<string>, settings: DeferralSettings) {
    this.deferrable = offered.filter((t) => t.deferrable === true && t.name !== TOOL_SEARCH).sort(byName);
    this.active = overBudget(this.deferrable, settings);
    const known = new Set(this.deferrable.map((t) => t.name));
    for (const name of loadedNames) if (known.has(name)) this.loaded.add(name);
    this.tools = this.active
      ? [
          ...offered.filter((t) => t.name !== TOOL_SEARCH),
          toolSearchTool({ candidates: this.deferrable, maxResults: settings.maxResults, load: (names) => this.load(names) }),
        ]
      : [...offered];
  }

  /** What the next model call sends (see `ToolOffer`): the same object until a load. */
  readonly offer = (): OfferedToModel => {
    this.current ??= this.build();
    return this.current;
  };

  /** The deferrable tools whose schemas are not loaded (empty when deferral is not in force). */
  deferred(): AnyTool[] {
    return this.active ? this.deferrable.filter((t) => !this.loaded.has(t.name)) : [];
  }

  /** Names loaded so far (by earlier turns of the session and by this one). */
  loadedNames(): string[] {
    return [...this.loaded].sort();
  }

  /** Loads deferrable tools by name (unknown names are ignored); returns those newly loaded. */
  load(names: readonly string[]): string[] {
    const added: string[] = [];
    for (const name of names) {
      if (this.loaded.has(name) || !this.deferrable.some((t) => t.name === name)) continue;
      this.loaded.add(name);
      added.push(name);
    }
    if (added.length > 0) this.current = null;
    return added;
  }

  private build(): OfferedToModel {
    if (!this.active) return { tools: this.tools.map(toolSpec), system: [] };
    const deferred = new Set(this.deferred().map((t) => t.name));
    const system: SystemBlock[] = deferredToolsBlocks(this.deferred());
    return { tools: this.tools.filter((t) => !deferred.has(t.name)).map(toolSpec), system };
  }
}
