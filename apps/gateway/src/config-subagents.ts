import {
  duration,
  GENERAL_INSTRUCTIONS,
  GENERAL_SUBAGENT,
  MODE_ORDER,
  type PermissionMode,
  type SubagentType,
  TOOL_GROUPS,
  TOOL_PROFILES,
  type ToolProfileSetting,
} from '@switchboard/core';
import { z } from 'zod';

// Every mode the permission engine knows (a mode added there is accepted here unchanged).
const permissionMode = z.enum(MODE_ORDER as readonly PermissionMode[] as [PermissionMode, ...PermissionMode[]]);
const toolSet = z.enum([...TOOL_PROFILES, ...TOOL_GROUPS]);

/** A subagent's model calls at most, and its report's length at most, when its type does not say. */
const DEFAULT_MAX_TURNS = 15;
const DEFAULT_RESULT_BUDGET = 20_000;

/**
 * One subagent type, `agents.<id>.subagents.<name>` (docs/subagents.md). Its tools — a profile or
 * group (`{ profile }`), a list of tool names (`{ allow }`) or `"inherit"` — are always intersected
 * with what the parent turn is offered.
 */
const subagentTypeSchema = z.strictObject({
  /** One line the model sees in the `task` tool's description. */
  description: z.string().min(1).max(500),
  /** The subagent's system prompt; default: the built-in general instructions. */
  instructions: z.string().min(1).max(100_000).default(GENERAL_INSTRUCTIONS),
  tools: z
    .union([
      z.literal('inherit'),
      z.strictObject({ profile: z.union([toolSet, z.array(toolSet).min(1).max(10)]) }),
      z.strictObject({ allow: z.array(z.string().min(1).max(128)).max(500) }),
    ])
    .default('inherit'),
  /** The model it runs on; default: `model.name`. */
  model: z.string().min(1).max(200).optional(),
  maxTurns: z.number().int().min(1).max(200).default(DEFAULT_MAX_TURNS),
  /** Its final report's length at most, in characters (longer is cut, with a note). */
  resultBudget: z.number().int().min(100).max(1_000_000).default(DEFAULT_RESULT_BUDGET),
  /** A mode to run in, never above the parent turn's (the lower of the two applies). */
  mode: permissionMode.optional(),
});

/** `agents.<id>.subagents`: set (even to `{}`) to offer the `task` tool; each key adds a type beside the built-in `general` (a `general` key replaces it). */
export const agentSubagentsSchema = z
  .record(z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'expected a lower-case name like "researcher"'), subagentTypeSchema)
  .optional();

export type SubagentTypeConfig = z.output<typeof subagentTypeSchema>;

/** `subagents`: the gateway-wide limits of the `task` tool's subagents (docs/subagents.md). */
export const subagentLimitsSchema = z
  .strictObject({
    /** Levels of subagents that may nest: 1 means a subagent cannot start one (it is not offered `task`). */
    maxDepth: z.number().int().min(1).max(3).default(1),
    /** Subagents of one turn running at once; more wait for a slot. */
    perTurn: z.number().int().min(1).max(32).default(4),
    /** Subagents running at once across the gateway; more wait for a slot. */
    perGateway: z.number().int().min(1).max(256).default(16),
    /** How long one `task` call may take (waiting for a slot included); then it is stopped. */
    timeout: duration.refine((ms) => ms >= 1000, 'must be at least 1s').default(30 * 60_000),
  })
  .prefault({});

/**
 * An agent's subagent types with the built-in `general` (the parent's tools, minus `task`), tool
 * settings resolved to names by `namesOf`; undefined when the agent sets no `subagents`.
 */
export function subagentTypesOf(
  configured: Readonly<Record<string, SubagentTypeConfig>> | undefined,
  namesOf: (setting: ToolProfileSetting) => readonly string[],
): ReadonlyMap<string, SubagentType> | undefined {
  if (!configured) return undefined;
  const types = new Map<string, SubagentType>([
    [
      GENERAL_SUBAGENT,
      {
        name: GENERAL_SUBAGENT,
        description: 'A general-purpose agent with your tools: research, reading many files, multi-step work',
        instructions: GENERAL_INSTRUCTIONS,
        tools: 'inherit',
        maxTurns: DEFAULT_MAX_TURNS,
        resultBudget: DEFAULT_RESULT_BUDGET,
      },
    ],
  ]);
  for (const [name, t] of Object.entries(configured)) {
    const tools = t.tools === 'inherit' ? 'inherit' : new Set('allow' in t.tools ? t.tools.allow : namesOf(t.tools.profile));
    types.set(name, {
      name,
      description: t.description,
      instructions: t.instructions,
      tools,
      maxTurns: t.maxTurns,
      resultBudget: t.resultBudget,
      ...(t.model ? { model: t.model } : {}),
      ...(t.mode ? { mode: t.mode } : {}),
    });
  }
  return types;
}
