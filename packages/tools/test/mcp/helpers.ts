import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { AnyTool, ToolContext } from '@switchboard/agent';
import { mcpFixturePath } from '@switchboard/testkit';
import { connectMcpServers, type McpBridge, type McpLog, type McpServerConfig } from '../../src/mcp/index.js';

const dirs: string[] = [];
const bridges: McpBridge[] = [];

afterEach(async () => {
  await Promise.all(bridges.splice(0).map((b) => b.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A logger that keeps every entry. */
export function memoryLog(): McpLog & { entries: { level: string; obj: Record<string, unknown>; msg: string }[] } {
  const entries: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => void entries.push({ level, obj, msg });
  return { entries, info: at('info'), warn: at('warn'), error: at('error') };
}

/** A fresh temp dir holding the fixture's event log path (file created by the fixture). */
export function fixtureLogPath(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'swb-mcp-'));
  dirs.push(dir);
  return path.join(dir, 'fixture.log');
}

/** The fixture's event lines so far. */
export function fixtureLines(logPath: string): string[] {
  return existsSync(logPath) ? readFileSync(logPath, 'utf8').split('\n').filter(Boolean) : [];
}

/** Config of one fixture server logging to `logPath`. */
export function fixtureServer(logPath: string, extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { command: process.execPath, args: [mcpFixturePath()], env: { MCP_FIXTURE_LOG: logPath }, ...extra } as McpServerConfig;
}

/** Connects and registers the bridge for closing after the test. */
export async function bridgeOf(servers: Record<string, McpServerConfig>, connectTimeoutMs = 15_000, log = memoryLog()): Promise<McpBridge> {
  const bridge = await connectMcpServers(servers, { log, connectTimeoutMs });
  bridges.push(bridge);
  return bridge;
}

/** Polls `check` every 25 ms until it is true; fails after `ms`. */
export async function waitFor(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Whether a process id is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A tool context for calls. */
export function ctx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, toolUseId: 'tu_1', sessionId: 's', turnId: 't', agentId: 'a', workspace: tmpdir() };
}

/** The bridge's tool named `name`. */
export function tool(bridge: McpBridge, name: string): AnyTool {
  const found = bridge.tools.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name} among ${bridge.tools.map((t) => t.name).join(', ')}`);
  return found;
}
