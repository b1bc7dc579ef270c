import { type AnyTool, READ_RESULT_TOOL } from '@switchboard/agent';
import {
  CapabilityRegistry,
  type Channel,
  createMemoryTools,
  createReadResultTool,
  createSkillTool,
  createTaskTool,
  GENERAL_SUBAGENT,
  SKILL_TOOL,
  type SkillCatalog,
  type Storage,
} from '@switchboard/core';
import { createFileTools, createSendFileTool, createWebTools } from '@switchboard/tools';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { toolResultBudgets } from '../config-context.js';
import { webFetchSettingsOf, webSearchSettingsOf } from '../config-web.js';
import { offeredToOf, withOfferedToKey } from './offered-to.js';

/** The tools of the configured MCP servers that came up, and how to close their clients. */
export interface McpConnection {
  tools: readonly AnyTool[];
  close(): Promise<void>;
}

/**
 * Start-up step: connects the configured MCP servers (never rejects: a server that fails is
 * logged and left out). The MCP SDK is loaded only when servers are configured (it costs ~200 ms
 * of start-up).
 */
export async function connectMcp(cfg: Readonly<Config>, log: Logger): Promise<McpConnection> {
  const servers = cfg.mcpServers;
  if (Object.keys(servers).length === 0) return { tools: [], close: async () => {} };
  const { connectMcpServers } = await import('@switchboard/tools/mcp');
  return connectMcpServers(servers, { log: log.child({ component: 'mcp' }), connectTimeoutMs: cfg.limits.mcpConnectTimeout });
}

/**
 * Start-up step: the capability registry over the built-in file tools, the web tools (`web_search` only with a provider), `builtins` (`exec`, when its sandbox works), the MCP tools and
 * `read_result` (which pages stored results from `storage`). Every tool's results have a budget:
 * the file tools declare the default one, any other tool (MCP) gets it from the turn
 * (`context.toolResults`); `read_result` is exempt (its pages are bounded).
 */
export function buildRegistry(
  cfg: Readonly<Config>,
  log: Logger,
  mcp: McpConnection,
  channels: readonly Channel[],
  storage: Storage,
  builtins: { tools: readonly AnyTool[]; sandboxGroup?: number; skills?: SkillCatalog } = { tools: [] },
): CapabilityRegistry {
  const resultCap = toolResultBudgets(cfg.context, cfg.limits).maxChars;
  const fileTools = createFileTools({
    maxResultChars: resultCap,
    regexMaxLength: cfg.limits.regexMaxLength,
    regexDeadlineMs: cfg.limits.regexDeadline,
    ...(builtins.sandboxGroup !== undefined ? { sandboxGroup: builtins.sandboxGroup } : {}),
    onRegexWorkerTerminated: ({ why, toolUseId }) => log.warn({ component: 'search_files', toolUseId, why }, `regex worker terminated (${why})`),
  });
  const webTools = createWebTools({ fetch: webFetchSettingsOf(cfg.tools.webFetch), search: webSearchSettingsOf(cfg.tools.webSearch) });
  const sendFile = cfg.tools.sendFile.enabled ? [createSendFileTool({ maxBytes: cfg.tools.sendFile.maxBytes })] : [];
  const tools = [
    ...fileTools,
    ...sendFile,
    ...webTools,
    ...builtins.tools,
    ...createMemoryTools(storage),
    ...mcp.tools,
    createReadResultTool(storage.sessions),
    // The skill tool exists once some agent has skills (configured, or from its workspace).
    ...(Object.keys(cfg.agents).some((id) => builtins.skills?.offersSkills(id)) ? [createSkillTool()] : []),
    // Listed for operators and `capabilities.offeredTo`; agents with `subagents` offer their own copy (with their types).
    createTaskTool([{ name: GENERAL_SUBAGENT, description: 'the parent turn’s tools, without task' }]),
  ];
  const skills = (builtins.skills?.all() ?? []).map(({ skill, agents }) => ({
    name: skill.name,
    description: skill.description,
    ...(skill.allowedTools ? { allowedTools: skill.allowedTools } : {}),
    source: skill.source,
    agents,
  }));
  return withOfferedToKey(
    () =>
      new CapabilityRegistry({
        tools,
        mcpServers: Object.keys(cfg.mcpServers),
        channels,
        model: cfg.model,
        hooks: cfg.hooks,
        offeredTo: offeredToOf(cfg),
        skills,
      }),
  );
}

/**
 * An agent's tools with `read_result` added (from the registry) when it offers any tool: every
 * agent whose tools can produce a result the budget cuts can page it.
 */
export function withReadResult(tools: readonly AnyTool[], registry: CapabilityRegistry): AnyTool[] {
  const reader = registry.tool(READ_RESULT_TOOL);
  if (!reader || tools.length === 0 || tools.some((tool) => tool.name === READ_RESULT_TOOL)) return [...tools];
  return [...tools, reader];
}

/** An agent's tools with the `skill` tool added (from the registry) when the agent has skills (see `SkillCatalog.offersSkills`). */
export function withSkillTool(tools: readonly AnyTool[], registry: CapabilityRegistry, hasSkills: boolean): AnyTool[] {
  const skill = registry.tool(SKILL_TOOL);
  if (!skill || !hasSkills || tools.some((tool) => tool.name === SKILL_TOOL)) return [...tools];
  return [...tools, skill];
}
