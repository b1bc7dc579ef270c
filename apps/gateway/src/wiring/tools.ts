import type { AnyTool } from '@switchboard/agent';
import { withDefaultResultCap } from '@switchboard/agent';
import { CapabilityRegistry, type Channel } from '@switchboard/core';
import { createFileTools } from '@switchboard/tools';
import type { Logger } from 'pino';
import type { Config } from '../config.js';

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
 * Start-up step: the capability registry over the built-in file tools and the MCP tools. Every
 * tool's results are capped: the file tools by the same limit, any other tool (MCP) by default.
 */
export function buildRegistry(cfg: Readonly<Config>, log: Logger, mcp: McpConnection, channels: readonly Channel[]): CapabilityRegistry {
  const resultCap = cfg.limits.toolResultMaxChars;
  const fileTools = createFileTools({
    maxResultChars: resultCap,
    regexMaxLength: cfg.limits.regexMaxLength,
    regexDeadlineMs: cfg.limits.regexDeadline,
    onRegexWorkerTerminated: ({ why, toolUseId }) => log.warn({ component: 'search_files', toolUseId, why }, `regex worker terminated (${why})`),
  });
  const tools = [...fileTools, ...mcp.tools].map((tool) => withDefaultResultCap(tool, resultCap));
  return new CapabilityRegistry({ tools, mcpServers: Object.keys(cfg.mcpServers), channels, model: cfg.model, hooks: cfg.hooks });
}
