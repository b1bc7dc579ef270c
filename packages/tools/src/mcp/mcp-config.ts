import { z } from 'zod';

const common = {
  /** MCP tool names (as the server names them) to treat as read-only (and concurrency-safe) whatever the server says. */
  readOnlyTools: z.array(z.string()).optional(),
  /**
   * Trust the server's tool annotations: `readOnlyHint: true` then makes a tool read-only and
   * concurrency-safe. Default false — annotations are hints from an outside program.
   */
  trustAnnotations: z.boolean().default(false),
  /** Per-call timeout in ms (default 60 000). */
  timeoutMs: z.number().int().positive().optional(),
};

/** An MCP server the gateway starts as a child process and talks to over stdio. */
export const McpStdioServerConfigSchema = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  /** The child's only environment besides the SDK's safe defaults (PATH, HOME, …). */
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  ...common,
});

/** An MCP server reached over Streamable HTTP. */
export const McpHttpServerConfigSchema = z.strictObject({
  url: z.url(),
  headers: z.record(z.string(), z.string()).optional(),
  ...common,
});

/** One operator-configured MCP server (`mcpServers.<name>` in the gateway config). */
export const McpServerConfigSchema = z.union([McpStdioServerConfigSchema, McpHttpServerConfigSchema]);

export type McpStdioServerConfig = z.infer<typeof McpStdioServerConfigSchema>;
export type McpHttpServerConfig = z.infer<typeof McpHttpServerConfigSchema>;
/** One operator-configured MCP server: stdio (`command`) or HTTP (`url`). */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** The logger the bridge reports to (a pino logger fits). */
export interface McpLog {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

/** Options of {@link connectMcpServers}. */
export interface ConnectMcpOptions {
  log: McpLog;
  /** Deadline for starting one server, its handshake and its tool listing. */
  connectTimeoutMs: number;
}

/** How one configured server is doing. */
export interface McpServerStatus {
  server: string;
  state: 'up' | 'failed';
  /** Tools exposed from this server (0 when it failed to start). */
  tools: number;
  error?: string;
  /** Child process id of a stdio server once spawned (kept after it exits). */
  pid?: number;
}

/** Default per-call timeout when a server sets no `timeoutMs`. */
export const MCP_DEFAULT_CALL_TIMEOUT_MS = 60_000;
