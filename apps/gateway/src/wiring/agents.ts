import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  type AgentRuntime,
  type CapabilityRegistry,
  createTaskTool,
  type SkillCatalog,
  type Storage,
  type SubagentType,
  WorkspaceDirectories,
  migrateLegacyWorkspace,
} from '@switchboard/core';
import { subagentTypesOf } from '../config-subagents.js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { withReadResult, withSkillTool } from './tools.js';
import { operatorSystem } from '../config-instructions.js';

/** The workspace directories, and the move of old single workspaces into the per-person layout. */
export interface Workspaces {
  directories: WorkspaceDirectories;
  /** No principal existed at start: the owner is created after the listen, and {@link migrate} waits for it. */
  firstStart: boolean;
  /** Moves each agent's old single workspace into the per-person layout (the earliest owner's directory). */
  migrate(): Promise<void>;
}

/**
 * Start-up step: creates `workspaces.root` and, unless this is a first start (no principal
 * yet), moves old workspaces into the per-person layout now; on a first start the caller runs
 * {@link Workspaces.migrate} once the owner exists.
 */
export async function prepareWorkspaces(cfg: Readonly<Config>, storage: Storage, log: Logger): Promise<Workspaces> {
  const root = cfg.workspaces.root ?? join(cfg.gateway.dataDir, 'workspaces');
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const directories = new WorkspaceDirectories({
    root,
    modeOf: (id) => (Object.hasOwn(cfg.agents, id) ? cfg.agents[id]!.workspace.mode : 'per-person'),
  });
  const legacyRoot = join(cfg.gateway.dataDir, 'workspaces');
  const migrate = async () => {
    const principals = await storage.principals.list();
    for (const [agentId, agent] of Object.entries(cfg.agents)) {
      await migrateLegacyWorkspace({ agentId, legacyRoot, root, mode: agent.workspace.mode, principals, log }).catch((err: unknown) => {
        const why = err instanceof Error ? err.message : String(err);
        throw new Error(
          `could not move the old workspace of agent "${agentId}" (${join(legacyRoot, agentId)}) into the per-person layout under workspaces.root: ${why}`,
          { cause: err },
        );
      });
    }
  };
  const firstStart = (await storage.principals.count()) === 0;
  if (!firstStart) await migrate();
  return { directories, firstStart, migrate };
}

/** The configured agents, ready for the engine. */
export interface Agents {
  runtimes: ReadonlyMap<string, AgentRuntime>;
  /** `default` if configured, else the first agent. */
  defaultAgent: string;
  /** The agent of a session; an unknown id gets the default agent. */
  agent(id: string): AgentRuntime;
  /** Each agent's tools by name, from its profile (the control API lists them). */
  toolNames: Readonly<Record<string, readonly string[]>>;
  /** An agent's subagent types (`general` included); undefined when it sets no `subagents` (no `task` tool). */
  subagentTypes(id: string): ReadonlyMap<string, SubagentType> | undefined;
}

/**
 * Start-up step: one runtime per configured agent, with the tools of its profile (and `skill` when it has skills). Warns about
 * MCP tools no agent offers.
 */
export function buildAgents(cfg: Readonly<Config>, registry: CapabilityRegistry, workspaces: WorkspaceDirectories, log: Logger, skills?: SkillCatalog): Agents {
  const runtimes = new Map<string, AgentRuntime>();
  const subagents = new Map<string, ReadonlyMap<string, SubagentType>>();
  for (const [id, agent] of Object.entries(cfg.agents)) {
    const types = subagentTypesOf(agent.subagents, (setting) => registry.toolsFor(setting).map((tool) => tool.name));
    if (types) subagents.set(id, types);
    // An agent with subagents offers `task`, listing its types (the registry's entry lists `general` only).
    const task = types ? [createTaskTool([...types.values()])] : [];
    runtimes.set(id, {
      id,
      system: operatorSystem(cfg.instructionsFile, id, agent),
      tools: [...withReadResult(withSkillTool(registry.toolsFor(agent.tools.profile), registry, skills?.offersSkills(id) ?? false), registry), ...task],
      maxTurns: agent.maxTurns,
      timezone: agent.timezone,
      // Each turn works in its person's or room's directory (PolicyService); this one is never created.
      workspace: workspaces.none(id),
    });
  }
  const offered = (name: string) => [...runtimes.values()].some((runtime) => runtime.tools.some((tool) => tool.name === name));
  const hiddenMcp = registry.groupMembers('group:mcp').filter((name) => !offered(name));
  if (hiddenMcp.length > 0) log.warn({ tools: hiddenMcp }, 'MCP tools that no agent offers: use tools.profile "full" or add "group:mcp"');
  const defaultAgent = runtimes.has('default') ? 'default' : [...runtimes.keys()][0]!;
  return {
    runtimes,
    defaultAgent,
    agent: (id) => runtimes.get(id) ?? runtimes.get(defaultAgent)!,
    toolNames: Object.fromEntries([...runtimes].map(([id, runtime]) => [id, runtime.tools.map((tool) => tool.name)])),
    subagentTypes: (id) => subagents.get(id) ?? (runtimes.has(id) ? undefined : subagents.get(defaultAgent)),
  };
}
