import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Tool as McpToolDef } from '@modelcontextprotocol/sdk/types.js';
import type { AnyTool } from '@switchboard/agent';
import { MCP_DEFAULT_CALL_TIMEOUT_MS, type ConnectMcpOptions, type McpLog, type McpServerConfig, type McpServerStatus } from './mcp-config.js';
import { mcpToolName } from './mcp-names.js';
import { mcpTool, type McpConnection } from './mcp-tool.js';

/** The MCP servers' tools as gateway tools, plus their health. */
export interface McpBridge {
  /** Every tool of every server that came up, named `mcp__<server>__<tool>`. */
  readonly tools: AnyTool[];
  /** One entry per configured server, in configuration order. */
  status(): McpServerStatus[];
  /** Closes every client and transport (stdio children are ended, then killed). Idempotent. */
  close(): Promise<void>;
}

const CLIENT_INFO = { name: 'switchboard', version: '0.1.0' };
const MAX_STDERR_LINE = 2000;

/** One configured server: its client, transport and state. */
class ServerHandle implements McpConnection {
  readonly client = new Client(CLIENT_INFO);
  readonly timeoutMs: number;
  state: 'starting' | 'up' | 'failed' = 'starting';
  error: string | undefined;
  defs: McpToolDef[] = [];
  tools = 0;
  closing = false;
  lastStderr: string | undefined;
  transport: Transport | undefined;
  /** Last known child process id of a stdio server (kept after it exits, for the operator). */
  pid: number | undefined;

  constructor(
    readonly server: string,
    readonly config: McpServerConfig,
    private readonly log: McpLog,
  ) {
    this.timeoutMs = config.timeoutMs ?? MCP_DEFAULT_CALL_TIMEOUT_MS;
  }

  unavailable(): string | undefined {
    if (this.closing) return 'the MCP bridge was closed';
    return this.state === 'up' ? undefined : (this.error ?? 'not started');
  }

  /** Starts the transport, handshakes and lists tools within `deadlineMs`; never throws. */
  async start(deadlineMs: number): Promise<void> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error(`did not start within ${deadlineMs} ms`)), deadlineMs);
    const expired = new Promise<never>((_, reject) => {
      deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason as Error), { once: true });
    });
    expired.catch(() => {});
    try {
      this.transport = this.makeTransport();
      this.client.onerror = (err) => {
        // Start-up errors end up in the failure logged below.
        if (this.state === 'up') this.log.warn({ mcpServer: this.server, err: err.message }, 'MCP server error');
      };
      this.client.onclose = () => this.onClosed();
      const opts = { signal: deadline.signal, timeout: deadlineMs };
      await Promise.race([this.client.connect(this.transport, opts), expired]);
      this.defs = await Promise.race([this.listAll(opts), expired]);
      this.state = 'up';
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.fail(this.lastStderr ? `${message}; last stderr: ${this.lastStderr}` : message);
      this.log.error({ mcpServer: this.server, err: this.error }, 'MCP server failed to start; its tools are skipped');
      await this.shutdown();
    } finally {
      clearTimeout(timer);
    }
  }

  private makeTransport(): Transport {
    const cfg = this.config;
    if ('url' in cfg) {
      return new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit: { headers: cfg.headers ?? {} } });
    }
    const transport = new StdioClientTransport({
      command: cfg.command,
      args: cfg.args ?? [],
      // Only the SDK's safe defaults (PATH, HOME, …) plus what the operator configured: no gateway secrets.
      env: { ...getDefaultEnvironment(), ...cfg.env },
      ...(cfg.cwd !== undefined ? { cwd: cfg.cwd } : {}),
      stderr: 'pipe',
    });
    // Record the child's pid as soon as it is spawned: the SDK forgets it when closing.
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      this.pid = transport.pid ?? undefined;
    };
    const stderr = transport.stderr;
    if (stderr) {
      createInterface({ input: stderr as Readable }).on('line', (line) => {
        const cut = line.length > MAX_STDERR_LINE ? `${line.slice(0, MAX_STDERR_LINE)}…` : line;
        this.lastStderr = cut;
        this.log.info({ mcpServer: this.server, stderr: cut }, 'MCP server stderr');
      });
    }
    return transport;
  }

  private async listAll(opts: { signal: AbortSignal; timeout: number }): Promise<McpToolDef[]> {
    const defs: McpToolDef[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.client.listTools(cursor !== undefined ? { cursor } : undefined, opts);
      defs.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return defs;
  }

  private fail(error: string): void {
    this.state = 'failed';
    this.error = error;
  }

  private onClosed(): void {
    if (this.closing || this.state !== 'up') return;
    const how = 'url' in this.config ? 'connection closed' : 'server process exited';
    this.fail(this.lastStderr ? `${how}; last stderr: ${this.lastStderr}` : how);
    this.log.error({ mcpServer: this.server, err: this.error }, 'MCP server went away; its tools now fail');
  }

  /** Closes the client and transport; waits (bounded) for a stdio child to be gone. */
  async shutdown(): Promise<void> {
    await this.client.close().catch(() => {});
    await this.transport?.close().catch(() => {});
    // The SDK ends stdin, then SIGTERMs after 2 s and SIGKILLs after 4 s.
    if (this.pid !== undefined) await waitGone(this.pid, 5000);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: unknown }).code === 'EPERM';
  }
}

async function waitGone(pid: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
}

/**
 * Starts every configured MCP server (in parallel), lists its tools and exposes each as a gateway
 * tool `mcp__<server>__<tool>`. A server that fails to start or list its tools within
 * `connectTimeoutMs` is logged, shut down and reported `failed` in {@link McpBridge.status}; the
 * others are unaffected. Never rejects.
 */
export async function connectMcpServers(servers: Record<string, McpServerConfig>, opts: ConnectMcpOptions): Promise<McpBridge> {
  const handles = Object.entries(servers).map(([name, cfg]) => new ServerHandle(name, cfg, opts.log));
  await Promise.all(handles.map((h) => h.start(opts.connectTimeoutMs)));

  const taken = new Set<string>();
  const tools: AnyTool[] = [];
  for (const h of handles) {
    if (h.state !== 'up') continue;
    const readOnlyTools = new Set(h.config.readOnlyTools ?? []);
    for (const def of h.defs) {
      if (def.execution?.taskSupport === 'required') {
        opts.log.warn({ mcpServer: h.server, tool: def.name }, 'MCP tool requires task execution; skipped');
        continue;
      }
      const name = mcpToolName(h.server, def.name, taken);
      taken.add(name);
      // Annotations are the server's claims: they count only when the operator trusts the server.
      const readOnly = readOnlyTools.has(def.name) || (h.config.trustAnnotations === true && def.annotations?.readOnlyHint === true);
      tools.push(mcpTool(h, def, name, readOnly));
      h.tools++;
    }
    opts.log.info({ mcpServer: h.server, tools: h.tools }, 'MCP server up');
  }

  let closed: Promise<void> | undefined;
  return {
    tools,
    status: () =>
      handles.map((h) => {
        const s: McpServerStatus = { server: h.server, state: h.state === 'up' ? 'up' : 'failed', tools: h.tools };
        if (h.error !== undefined) s.error = h.error;
        if (h.pid !== undefined) s.pid = h.pid;
        return s;
      }),
    close: () => {
      closed ??= (async () => {
        for (const h of handles) {
          h.closing = true;
          if (h.state === 'up') h.error = 'the MCP bridge was closed';
          h.state = 'failed';
        }
        await Promise.all(handles.map((h) => h.shutdown()));
      })();
      return closed;
    },
  };
}
