import type { z } from 'zod';
import type { ToolResultBlock } from './messages.js';

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
   * The principal whose message the turn answers (the speaker), as the turn policy resolved it
   * from the inbound message — never from the model's input. Absent: a sender without a
   * principal. Tools that keep per-person data (memory) key it by this.
   */
  principalId?: string;
  /** The turn runs in a room session (several people share it): per-person data is off there. */
  roomSession?: boolean;
  /**
   * For tools that walk directories: whether one entry they met may be returned (the permission
   * rules decide). `relative` is workspace-relative and `/`-separated, `absolute` the entry on
   * disk. Absent: every entry may be returned. Contract: never throws; `false` withholds.
   */
  pathFilter?: PathFilter;
  /**
   * Reports progress of a long call (an `exec` command's lines so far) to whoever watches the turn
   * (WebSocket `tool` frames with `phase: "progress"`). Best-effort: never throws, never blocks;
   * absent when nobody listens. Tools should report at most about once a second.
   */
  progress?: (update: ToolProgress) => void;
  /**
   * Delivers a file to the conversation the turn answers (the `send_file` tool). Resolves with a
   * short description of what was sent; rejects when the channel could not deliver it. Absent when
   * the turn's channel cannot send files.
   */
  sendFile?: (file: OutboundFile) => Promise<string>;
  /**
   * Runs a subagent for the `task` tool (docs/subagents.md): a fresh conversation on the same loop
   * whose final text is the result. Absent where no subagent may start (an agent without
   * subagents, or a subagent at the depth limit). Contract: honours `ctx.signal`; never throws for
   * a refusal (an unknown type, a limit): that is an `isError` result.
   */
  subagent?: SubagentLauncher;
  /**
   * The skills of this run (a turn, or a subagent's whole run): what the `skill` tool loads, the
   * narrowing their `allowed-tools` impose, and the folders `read_file` may read. Absent: the run
   * offers no skills (and nothing is narrowed).
   */
  skills?: SkillScope;
}

/** A verdict of {@link SkillScope.permits}. */
export type ToolPermit = { ok: true } | { ok: false; reason: string };

/**
 * The skills of one run: one object per run, held by whoever runs it (core's `SkillRun`; a
 * subagent holds its own). Loading a skill may narrow what the rest of the run may use — never
 * widen it — and lets `read_file` read that skill's own folder, read-only.
 */
export interface SkillScope {
  /** Loads a skill by name (the `skill` tool): its instructions, as the tool's result. Contract: never throws. */
  load(name: string): Promise<ToolResult>;
  /** Whether a call of this tool may run now, given the skills loaded so far (their `allowed-tools`). Contract: never throws. */
  permits(toolName: string): ToolPermit;
  /** The real paths of the loaded skills' folders: read-only file reads may open files inside them (and nothing else outside the workspace). */
  readRoots(): readonly string[];
}

/** What the `task` tool asks for (see {@link ToolContext.subagent}). */
export interface SubagentRequest {
  /** A short label of the task (3–7 words), shown to people. */
  description: string;
  /** The whole task: the subagent sees nothing of the parent's conversation but this. */
  prompt: string;
  /** The subagent type; absent: `general`. */
  type?: string;
}

/** See {@link ToolContext.subagent}. */
export type SubagentLauncher = (request: SubagentRequest, ctx: ToolContext) => Promise<ToolResult>;

/** A file a tool hands to the turn's channel (see {@link ToolContext.sendFile}). */
export interface OutboundFile {
  /** The file name the person sees (a plain name, no directories). */
  name: string;
  /** Its media type (`application/pdf`, `image/png`, `application/octet-stream`). */
  mimeType: string;
  data: Uint8Array;
  /** A short text to go with it. */
  caption?: string;
}

/** One progress report of a running tool call (see {@link ToolContext.progress}). */
export interface ToolProgress {
  /** One human-readable line: `12 lines, 4 s`, `waiting for a free runner`. */
  message: string;
  /** Output lines so far, when the tool counts them. */
  lines?: number;
  /** Milliseconds since the call started. */
  elapsedMs?: number;
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
 * command (`sandbox`), or a plan presented for approval (`plan`: `exit_plan_mode`, a person's
 * decision only, never saved as a rule). Only `mode` asks may be answered by automatic responders.
 */
export type AskSource = 'mode' | 'rule' | 'safety' | 'hook' | 'sandbox' | 'plan';

export type PermissionResult =
  | { behavior: 'allow'; updatedInput?: unknown }
  | { behavior: 'deny'; reason: string; source: DecisionSource }
  | { behavior: 'ask'; reason: string; source: DecisionSource }
  /**
   * No opinion; the rules and the mode decide. `access` is the tool's classification of this one
   * call, for tools whose risk depends on the input (`exec`): `read` lets it run as a read-only
   * call (in `plan`, and without asking in `default`); `edit` marks a file-system edit inside the
   * workspace, which `acceptEdits` lets through. Absent: the tool's static `readOnly` decides.
   */
  | { behavior: 'passthrough'; access?: CallAccess };

/** See the `passthrough` variant of {@link PermissionResult}. */
export type CallAccess = 'read' | 'edit';

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
  /**
   * This tool's result budget in characters: a longer result is cut for the model (head, tail and
   * a `read_result` reference; kept whole in the store). Absent: the turn's default budget
   * (`ResultBudgets.maxChars`). See docs/context.md, "Tool-result budget".
   */
  maxResultChars?: number;
  /**
   * May go out as name and one-line description only, when the offered schemas exceed the
   * deferral budget (`tools.deferral`); `tool_search` then loads its schema (docs/tools.md). MCP
   * tools are deferrable; built-in tools never are.
   */
  deferrable?: boolean;
  /** `'exempt'`: this tool's results are never cut (its output must be bounded by itself, e.g. `read_result`). */
  resultBudget?: 'exempt';
  validateInput?(input: I, ctx: ToolContext): Promise<{ ok: true } | { ok: false; message: string }>;
  checkPermissions?(input: I, ctx: ToolContext): Promise<PermissionResult>;
  /** What `Tool(content)` rules match against. */
  ruleContent?(input: I): string;
  /**
   * What `Tool(content)` rules match against when one call holds several parts (one per simple
   * command of an `exec` command line). Takes precedence over `ruleContent`. Rules are evaluated
   * per part: a deny on any part denies the call, an ask on any part asks, and an allow must cover
   * every part. Contract: at least one element; a throw refuses the call.
   */
  ruleContents?(input: I): string[];
  /** Contract: honour ctx.signal; a throw becomes an is_error tool_result. */
  call(input: I, ctx: ToolContext): Promise<ToolResult>;
}

export type AnyTool = Tool<unknown>;

/**
 * The permission seam: decides one tool use the model asked for.
 *
 * When: once per tool use that names a known tool and whose input passed the tool's schema and
 * its `validateInput`, right before it would run. The uses of one reply are decided one at a time,
 * in request order (never two at once): those of a parallel batch all before the batch runs, those
 * of a later batch after the earlier batches ran. A resumed turn's preset results are never
 * decided again.
 *
 * May: take as long as it needs (an `ask` is awaited here, e.g. a person's approval; persist it by
 * turn and `ctx.toolUseId` so a restarted turn finds it again); return `allow` with an
 * `updatedInput`, which is parsed by the tool's schema again (an invalid rewrite settles the use
 * as an is_error result); return `deny`, which settles the use as an is_error result worded by
 * `kind` (a person's denial tells the model to stop and wait). Once `ctx.signal` fires the loop
 * ends the turn `aborted` after this call returns, whatever it decided.
 *
 * Must not: run the tool itself, or mutate `input` (a rewrite goes in `updatedInput`).
 *
 * On throw (or rejection): the tool does not run; the model gets the is_error result
 * "The permission check for <tool> failed: <message>" and the turn carries on.
 */
export type CanUseTool = (tool: AnyTool, input: unknown, ctx: ToolContext) => Promise<Decision>;

/** What {@link AfterTool} is told about one finished call. */
export interface FinishedToolCall {
  tool: AnyTool;
  /** The input the tool ran with (after any rewrite by {@link CanUseTool}). */
  input: unknown;
  /** The result as capped for the model; `is_error` when the tool threw, timed out or was stopped. */
  result: ToolResultBlock;
  ctx: ToolContext;
}

/**
 * A hook on every tool call that ran (PostToolUse hooks).
 *
 * When: after the tool's call settled (result, throw, timeout or abort), before the batch's
 * `tool_end` events; the calls of one parallel batch are reported concurrently. Never for a use
 * settled without running (unknown tool, invalid input, denial, preset result of a resumed turn).
 *
 * May: await; return text, which is appended to the result the model sees after a blank line
 * (`undefined` or `''` adds nothing).
 *
 * Must not: throw, mutate `result`, or depend on the order in which a batch's calls are reported.
 *
 * On throw (or rejection): the query generator throws that error as soon as it rejects (the
 * batch's other calls are not awaited), with no `tool_end` for the batch and no terminal event
 * (the engine then fails the turn as an internal error).
 */
export type AfterTool = (call: FinishedToolCall) => Promise<string | undefined>;

/** Allows every call: the foundation's policy until the permission pipeline replaces it. */
export const allowAll: CanUseTool = async () => ({ behavior: 'allow' });
