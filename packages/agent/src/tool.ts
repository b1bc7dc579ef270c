import type { z } from 'zod';

/** What a tool sees of the turn it runs in. */
export interface ToolContext {
  /** Aborted when the turn is stopped or the tool times out. Contract: tools must honour it. */
  signal: AbortSignal;
  toolUseId: string;
  sessionId: string;
  turnId: string;
  agentId: string;
  /** Absolute path of the turn's workspace directory (file tools stay inside it). */
  workspace: string;
  /**
   * For tools that walk directories: whether one entry they met may be returned (the permission
   * rules decide). `relative` is workspace-relative and `/`-separated, `absolute` the entry on
   * disk. Absent: every entry may be returned. Contract: never throws; `false` withholds.
   */
  pathFilter?: PathFilter;
}

/** See {@link ToolContext.pathFilter}. */
export type PathFilter = (toolName: string, entry: { relative: string; absolute: string }) => Promise<boolean>;

export interface ToolResult {
  content: string;
  isError?: boolean;
}

export type DecisionSource = 'rule' | 'mode' | 'hook' | 'tool' | 'safety' | 'sandbox' | 'person' | 'limit';

/**
 * Which step raised an ask: the mode's default prompt (`mode`), an ask rule (`rule`), a safety
 * check or a tool's own check (`safety`), a PreToolUse hook (`hook`), or an unsandboxed
 * command (`sandbox`). Only `mode` asks may be answered by automatic responders.
 */
export type AskSource = 'mode' | 'rule' | 'safety' | 'hook' | 'sandbox';

export type PermissionResult =
  | { behavior: 'allow'; updatedInput?: unknown }
  | { behavior: 'deny'; reason: string; source: DecisionSource }
  | { behavior: 'ask'; reason: string; source: DecisionSource }
  | { behavior: 'passthrough' };

/** What the gateway answers for one tool_use. */
export type Decision =
  | { behavior: 'allow'; updatedInput?: unknown }
  | {
      behavior: 'deny';
      reason: string;
      kind: 'person' | 'rule' | 'mode' | 'hook' | 'safety' | 'limit';
    };

/** A capability the model may call. */
export interface Tool<I = unknown> {
  name: string;
  description: string;
  input: z.ZodType<I>;
  /** JSON Schema for the model; derived from `input` when omitted. */
  inputJsonSchema?: Record<string, unknown>;
  readOnly: boolean;
  concurrencySafe: boolean;
  /** Results longer than this are cut for the model (kept whole in the store). */
  maxResultChars?: number;
  validateInput?(input: I, ctx: ToolContext): Promise<{ ok: true } | { ok: false; message: string }>;
  checkPermissions?(input: I, ctx: ToolContext): Promise<PermissionResult>;
  /** What `Tool(content)` rules match against. */
  ruleContent?(input: I): string;
  /** Contract: honour ctx.signal; a throw becomes an is_error tool_result. */
  call(input: I, ctx: ToolContext): Promise<ToolResult>;
}

export type AnyTool = Tool<unknown>;

export type CanUseTool = (tool: AnyTool, input: unknown, ctx: ToolContext) => Promise<Decision>;

/** Allows every call: the foundation's policy until the permission pipeline replaces it. */
export const allowAll: CanUseTool = async () => ({ behavior: 'allow' });
