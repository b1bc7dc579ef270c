import { z } from 'zod';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type Tool as McpToolDef } from '@modelcontextprotocol/sdk/types.js';
import { SwbError, SwbErrorCode, type Tool, type ToolContext, type ToolResult } from '@switchboard/agent';
import { mcpResultToToolResult } from './mcp-result.js';

/** Stable codes of MCP tool failures. */
export type McpToolErrorCode = (typeof SwbErrorCode)['McpUnavailable' | 'McpTimeout' | 'McpCall' | 'Aborted'];

/** A failed MCP tool call, with a message written for the model and the operator. */
export class McpToolError extends SwbError {
  declare readonly code: McpToolErrorCode;
  constructor(code: McpToolErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'McpToolError';
  }
}

/** What an MCP-backed tool needs of its server's connection. */
export interface McpConnection {
  readonly server: string;
  readonly client: Client;
  /** Per-call timeout in ms. */
  readonly timeoutMs: number;
  /** Why the server cannot take calls now, or undefined while it is up. */
  unavailable(): string | undefined;
}

/** Arguments of an MCP tool: any JSON object; the MCP server validates them against its schema. */
export const mcpToolInput = z.record(z.string(), z.unknown());
/** Input type of every MCP-backed tool. */
export type McpToolInput = z.infer<typeof mcpToolInput>;

function describeFailure(err: unknown, name: string, conn: McpConnection, ctx: ToolContext): McpToolError {
  if (ctx.signal.aborted) return new McpToolError(SwbErrorCode.Aborted, `${name} was stopped before it finished`, { cause: err });
  const down = conn.unavailable();
  const closed = err instanceof McpError && err.code === ErrorCode.ConnectionClosed;
  if (down !== undefined || closed || (err instanceof Error && err.message === 'Not connected')) {
    const why = down ?? 'the connection closed';
    return new McpToolError(SwbErrorCode.McpUnavailable, `${name} failed: MCP server "${conn.server}" is not available (${why})`, {
      cause: err,
    });
  }
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
    return new McpToolError(SwbErrorCode.McpTimeout, `${name} timed out after ${conn.timeoutMs} ms`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new McpToolError(SwbErrorCode.McpCall, `${name} failed: ${message}`, { cause: err });
}

/**
 * Wraps one tool of a connected MCP server as a gateway {@link Tool} named `name`. The model sees the
 * server's `inputSchema`; `readOnly` (and `concurrencySafe`) come from the caller.
 */
export function mcpTool(conn: McpConnection, def: McpToolDef, name: string, readOnly: boolean): Tool<McpToolInput> {
  const text = def.description?.trim() || def.title || def.name;
  // As for derived schemas, the model gets no `$schema` key.
  const { $schema: _drop, ...schema } = def.inputSchema as Record<string, unknown>;
  return {
    name,
    description: `[MCP server ${conn.server}] ${text}`,
    input: mcpToolInput,
    inputJsonSchema: { ...schema, type: 'object' },
    readOnly,
    concurrencySafe: readOnly,
    // Out of `tools` (name and description only) while the offered schemas exceed the deferral budget.
    deferrable: true,
    async call(input: McpToolInput, ctx: ToolContext): Promise<ToolResult> {
      const down = conn.unavailable();
      if (down !== undefined) {
        throw new McpToolError(SwbErrorCode.McpUnavailable, `${name} failed: MCP server "${conn.server}" is not available (${down})`);
      }
      if (ctx.signal.aborted) throw new McpToolError(SwbErrorCode.Aborted, `${name} was stopped before it started`);
      try {
        const result = await conn.client.callTool({ name: def.name, arguments: input }, undefined, {
          signal: ctx.signal,
          timeout: conn.timeoutMs,
        });
        return mcpResultToToolResult(result);
      } catch (err) {
        throw describeFailure(err, name, conn, ctx);
      }
    },
  };
}
