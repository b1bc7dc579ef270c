import { toolSpec, type AnyTool } from '@switchboard/agent';
import { ALL_ROLES, DEFAULT_OFFERED_TO, OfferedToError } from './capability-offers.js';
import type { Channel } from './channel.js';
import { HOOK_EVENTS, type HooksConfig } from './permissions/hooks.js';
import { GROUP_RULE, TOOL_GROUPS, type ToolGroup } from './permissions/rule-text.js';
import type { Role } from './storage.js';
import { MEMORY_TOOLS } from './memory/access.js';
import { skillCapabilityId } from './skills/switches.js';

/** What kind of capability an entry is. */
export type CapabilityKind = 'tool' | 'channel' | 'model' | 'hook' | 'skill';

/** Risk facts of a tool (DESIGN.md §3), as the permission pipeline and operators see them. */
export interface RiskFacts {
  /** Never changes anything. */
  readOnly: boolean;
  /** May overwrite or delete what was there (not only add). */
  destructive: boolean;
  /** Safe to run in parallel with other concurrency-safe calls. */
  concurrencySafe: boolean;
  /** Talks to systems outside the gateway and its workspace. */
  openWorld: boolean;
}

/** One entry of the capability registry. */
export interface Capability {
  /** A tool's name (`read_file`, `mcp__github__search`), a channel id (`telegram:main`), `model:<provider>`, `hook:<event>:<n>` or `skill:<name>`. */
  id: string;
  kind: CapabilityKind;
  /** `builtin`, `mcp:<server>`, the channel type, `config`, or a skill's config key (`skills.dirs`, `agents.<id>.skills.dirs`). */
  source: string;
  description: string;
  /** Tools: the JSON Schema the model sees. */
  inputSchema?: Record<string, unknown>;
  /** Tools: risk facts. */
  risk?: RiskFacts;
  /** Tools: the `group:*` shorthands that include it. */
  groups?: string[];
  /** Tools: the roles offered it by default (`capabilities.offeredTo` over the built-in defaults); operators' offer-switches add scopes. */
  offeredTo?: Role[];
  /** Non-secret facts about channels, models, hooks and skills. */
  detail?: Record<string, unknown>;
}

/** Tool profiles: named sets of tools an agent offers (see docs/control-api.md#capabilities). */
export const TOOL_PROFILES = ['none', 'minimal', 'readonly', 'messaging', 'coding', 'full'] as const;
export type ToolProfile = (typeof TOOL_PROFILES)[number];

/** A profile setting: one profile or group, or a list whose tools are combined. */
export type ToolProfileSetting = ToolProfile | ToolGroup | readonly (ToolProfile | ToolGroup)[];

/** Built-in workspace file tools, and the ones among them that only read. */
const FS_TOOLS = ['read_file', 'list_files', 'search_files', 'write_file', 'edit_file', 'send_file'];
const FS_READ_ONLY = ['read_file', 'list_files', 'search_files'];
/** Names the web and runtime groups take once such tools exist. */
const WEB_TOOLS = ['web_fetch', 'web_search'];
const RUNTIME_TOOLS = ['exec'];
const MEMORY_TOOL_NAMES: readonly string[] = MEMORY_TOOLS;
/** Built-in tool names that may be absent from a registry (a tool whose prerequisite is missing): `capabilities.offeredTo` may name them. */
const RESERVED_TOOLS: ReadonlySet<string> = new Set([...FS_TOOLS, ...WEB_TOOLS, ...RUNTIME_TOOLS, ...MEMORY_TOOL_NAMES, 'read_result', 'skill']);
const PROFILE_GROUPS: Record<Exclude<ToolProfile, 'none' | 'minimal' | 'readonly'>, ToolGroup[]> = {
  messaging: ['group:web', 'group:memory'],
  coding: ['group:fs', 'group:runtime', 'group:web', 'group:memory'],
  full: [...TOOL_GROUPS],
};

function mcpServerOf(name: string, servers: readonly string[]): string | undefined {
  return servers.filter((s) => name.startsWith(`mcp__${s}__`)).sort((a, b) => b.length - a.length)[0];
}

/** What the registry is built from at start-up. */
export interface RegistryInput {
  /** Every tool: built-in file tools and MCP tools (`mcp__<server>__<tool>`). */
  tools: readonly AnyTool[];
  /** Configured MCP server names (to tell MCP tools' sources). */
  mcpServers: readonly string[];
  channels: readonly Channel[];
  model: { name: string; fallback?: string | undefined; baseUrl: string; apiKey: string };
  hooks: HooksConfig;
  /**
   * `capabilities.offeredTo`: per tool name, the roles offered it by default, over
   * {@link DEFAULT_OFFERED_TO}. A name must be a registered tool, a reserved built-in name, or a
   * tool of a configured MCP server that registered no tools (it did not come up).
   */
  offeredTo?: ReadonlyMap<string, readonly Role[]>;
  /** The configured skills (start-up discovery), each with the agents that offer it (`*`: every agent). */
  skills?: readonly RegistrySkill[];
}

/** A skill as the registry lists it. */
export interface RegistrySkill {
  name: string;
  description: string;
  allowedTools?: readonly string[];
  /** The config key it came from. */
  source: string;
  agents: '*' | readonly string[];
}

/**
 * The gateway-wide capability registry (DESIGN.md §3): every tool, channel, model provider and
 * hook, with ids, sources, schemas and risk facts; tool groups and profiles are resolved here.
 */
export class CapabilityRegistry {
  private readonly tools: readonly AnyTool[];
  private readonly byName: Map<string, AnyTool>;
  private readonly sources = new Map<string, string>();
  private readonly groups: Record<ToolGroup, string[]>;
  private readonly offers = new Map<string, readonly Role[]>();

  /** @throws {OfferedToError} when `input.offeredTo` names a tool that is neither registered nor reserved. */
  constructor(private readonly input: RegistryInput) {
    this.tools = input.tools;
    this.byName = new Map(input.tools.map((t) => [t.name, t]));
    for (const t of input.tools) {
      const server = mcpServerOf(t.name, input.mcpServers);
      this.sources.set(t.name, server !== undefined ? `mcp:${server}` : 'builtin');
    }
    const builtin = (names: string[]) => names.filter((n) => this.sources.get(n) === 'builtin' && this.byName.has(n));
    this.groups = {
      'group:fs': builtin(FS_TOOLS),
      'group:web': builtin(WEB_TOOLS),
      'group:runtime': builtin(RUNTIME_TOOLS),
      'group:memory': builtin([...MEMORY_TOOL_NAMES]),
      'group:mcp': input.tools.filter((t) => this.sources.get(t.name)?.startsWith('mcp:')).map((t) => t.name),
    };
    for (const [name, roles] of input.offeredTo ?? []) {
      if (!this.mayOffer(name)) {
        const known = input.tools.map((t) => t.name).join(', ') || 'none';
        throw new OfferedToError(name, `capabilities.offeredTo.${name}: no tool named ${JSON.stringify(name)} is registered (registered: ${known})`);
      }
      this.offers.set(name, [...roles]);
    }
  }

  /** Whether `capabilities.offeredTo` may name this tool (see {@link RegistryInput.offeredTo}). */
  private mayOffer(name: string): boolean {
    if (this.byName.has(name) || RESERVED_TOOLS.has(name)) return true;
    const server = mcpServerOf(name, this.input.mcpServers);
    return server !== undefined && !this.tools.some((t) => this.sources.get(t.name) === `mcp:${server}`);
  }

  /**
   * The roles a tool is offered to by default: its `capabilities.offeredTo` entry, else the
   * built-in default ({@link DEFAULT_OFFERED_TO}: `exec` → owner and admin), else every role.
   */
  offeredTo(name: string): readonly Role[] {
    return this.offers.get(name) ?? DEFAULT_OFFERED_TO.get(name) ?? ALL_ROLES;
  }

  /** The tool with this name, if registered. */
  tool(name: string): AnyTool | undefined {
    return this.byName.get(name);
  }

  /** Tool names in a group (empty for a group without tools yet). */
  groupMembers(group: ToolGroup): string[] {
    return [...this.groups[group]];
  }

  /** Every group with its tool names. */
  groupTable(): Record<ToolGroup, string[]> {
    return Object.fromEntries(TOOL_GROUPS.map((g) => [g, this.groupMembers(g)])) as Record<ToolGroup, string[]>;
  }

  /** The tools a profile setting offers, in registry order. */
  toolsFor(setting: ToolProfileSetting): AnyTool[] {
    const items: readonly (ToolProfile | ToolGroup)[] = typeof setting === 'string' ? [setting] : setting;
    const names = new Set<string>();
    for (const item of items) for (const n of this.namesOf(item)) names.add(n);
    return this.tools.filter((t) => names.has(t.name));
  }

  /** Tool names of every profile. */
  profileTable(): Record<ToolProfile, string[]> {
    return Object.fromEntries(TOOL_PROFILES.map((p) => [p, this.toolsFor(p).map((t) => t.name)])) as Record<ToolProfile, string[]>;
  }

  private namesOf(item: ToolProfile | ToolGroup): string[] {
    if (item.startsWith('group:')) return this.groups[item as ToolGroup];
    switch (item as ToolProfile) {
      case 'none':
        return [];
      case 'minimal':
        return this.groups['group:fs'].filter((n) => FS_READ_ONLY.includes(n));
      case 'readonly':
        return this.tools.filter((t) => t.readOnly).map((t) => t.name);
      default:
        return PROFILE_GROUPS[item as keyof typeof PROFILE_GROUPS].flatMap((g) => this.groups[g]);
    }
  }

  /**
   * Expands a group rule into one rule per member tool (`group:fs(notes/**)` →
   * `read_file(notes/**)`, …; an empty group expands to nothing); any other rule is returned as is.
   */
  expandRule(rule: string): string[] {
    const s = rule.trim();
    const m = GROUP_RULE.exec(s);
    if (!m || !TOOL_GROUPS.includes(`group:${m[1]}` as ToolGroup)) return [rule];
    return this.groups[`group:${m[1]}` as ToolGroup].map((name) => `${name}${m[2] ?? ''}`);
  }

  /** Risk facts of a tool. MCP tools follow the MCP defaults: not read-only means destructive; always open-world. */
  riskOf(tool: AnyTool): RiskFacts {
    const mcp = this.sources.get(tool.name)?.startsWith('mcp:') ?? false;
    return {
      readOnly: tool.readOnly,
      destructive:
        !tool.readOnly &&
        (mcp || tool.name === 'write_file' || tool.name === 'edit_file' || tool.name === 'memory_forget' || RUNTIME_TOOLS.includes(tool.name)),
      concurrencySafe: tool.concurrencySafe,
      openWorld: mcp || WEB_TOOLS.includes(tool.name) || RUNTIME_TOOLS.includes(tool.name),
    };
  }

  /** Every capability: tools, then channels, the model provider, hooks and skills. */
  list(): Capability[] {
    const out: Capability[] = this.tools.map((t) => ({
      id: t.name,
      kind: 'tool',
      source: this.sources.get(t.name) ?? 'builtin',
      description: t.description,
      inputSchema: toolSpec(t).input_schema,
      risk: this.riskOf(t),
      groups: TOOL_GROUPS.filter((g) => this.groups[g].includes(t.name)),
      offeredTo: [...this.offeredTo(t.name)],
    }));
    for (const c of this.input.channels) {
      out.push({
        id: c.id,
        kind: 'channel',
        source: c.type,
        description: `${c.type} channel, account ${c.account}`,
        detail: { required: c.required, health: c.health() },
      });
    }
    const m = this.input.model;
    out.push({
      id: 'model:anthropic',
      kind: 'model',
      source: 'config',
      description: 'Anthropic Messages API',
      detail: { model: m.name, fallback: m.fallback ?? null, configured: m.apiKey !== '', customBaseUrl: m.baseUrl !== '' },
    });
    for (const event of HOOK_EVENTS) {
      (this.input.hooks[event] ?? []).forEach((h, i) => {
        // Hook URLs, headers and environments may hold secrets: only the shape is listed.
        out.push({
          id: `hook:${event}:${i}`,
          kind: 'hook',
          source: 'config',
          description: `${event} ${h.type} hook`,
          detail: { event, type: h.type, matcher: h.matcher ?? '*' },
        });
      });
    }
    for (const s of this.input.skills ?? []) {
      out.push({
        id: skillCapabilityId(s.name),
        kind: 'skill',
        source: s.source,
        description: s.description,
        detail: { name: s.name, allowedTools: s.allowedTools ? [...s.allowedTools] : null, agents: s.agents === '*' ? '*' : [...s.agents] },
      });
    }
    return out;
  }

  /** One capability by id. */
  get(id: string): Capability | undefined {
    return this.list().find((c) => c.id === id);
  }
}
