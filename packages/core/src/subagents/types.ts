import type { AnyTool } from '@switchboard/agent';
import type { PermissionMode } from '../permissions/modes.js';
import { TASK_TOOL } from '../tool-status.js';

/** The built-in subagent type: the parent's tools without `task`, no instructions of its own beyond {@link GENERAL_INSTRUCTIONS}. */
export const GENERAL_SUBAGENT = 'general';

/** Tools a subagent never gets, whatever its type says: a plan approval is a person's decision about the parent's session. */
const NEVER_FOR_SUBAGENTS: ReadonlySet<string> = new Set(['exit_plan_mode']);

/** The system prompt of a `general` subagent. */
export const GENERAL_INSTRUCTIONS =
  'You are a subagent: another assistant gave you one task. You see only the task, not its conversation. ' +
  'Do the task with the tools you have, then answer with a concise final report: what you found or did, and anything you could not do. ' +
  'Only that final report goes back; nobody reads your intermediate messages.';

/** One subagent type (`agents.<id>.subagents.<name>`, or the built-in `general`). */
export interface SubagentType {
  name: string;
  /** One line the model sees in the `task` tool's description. */
  description: string;
  /** The subagent's system prompt. */
  instructions: string;
  /** The tool names the type may use (intersected with the parent's offered tools); `inherit`: all of the parent's. */
  tools: ReadonlySet<string> | 'inherit';
  /** The model it runs on; absent: the gateway's model. */
  model?: string;
  /** Model calls at most. */
  maxTurns: number;
  /** The final text's length at most, in characters (longer is cut, with a note). */
  resultBudget: number;
  /** A mode to lower the subagent to (never above the parent's: `lowerMode`). */
  mode?: PermissionMode;
}

/** The gateway-wide subagent limits (`subagents` in the config). */
export interface SubagentLimits {
  /** Levels of subagents that may nest: 1 means a turn's subagents cannot start their own. */
  maxDepth: number;
}

/**
 * The tools one subagent gets: the parent's tools of this turn (after the pre-filter) that its type
 * names (all of them for `inherit`), so a type's config can never hand a person a tool they are not
 * offered. `task` only while `mayDelegate` (below the depth limit) and the type names it
 * explicitly (`inherit` never passes it on); `exit_plan_mode` never.
 */
export function subagentTools(parentTools: readonly AnyTool[], type: Pick<SubagentType, 'tools'>, mayDelegate: boolean): AnyTool[] {
  return parentTools.filter((tool) => {
    if (NEVER_FOR_SUBAGENTS.has(tool.name)) return false;
    if (tool.name === TASK_TOOL) return mayDelegate && type.tools !== 'inherit' && type.tools.has(TASK_TOOL);
    return type.tools === 'inherit' || type.tools.has(tool.name);
  });
}

/** Cuts a subagent's final text to `budget` characters, with a note saying so. */
export function boundedReport(text: string, budget: number): string {
  if (text.length <= budget) return text;
  // Never cut between the two halves of a surrogate pair.
  let end = budget;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}\n\n[The subagent's report was cut: ${text.length} characters, the first ${end} shown.]`;
}
