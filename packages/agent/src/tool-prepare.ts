import type { ToolResultBlock, ToolUseBlock } from './messages.js';
import type { ResultBudgets } from './result-budget.js';
import { describeZodError, type ToolRunOutcome } from './tool-exec.js';
import type { AfterTool, AnyTool, CanUseTool, Decision, ToolContext, ToolProgress } from './tool.js';

/** What the tool steps of one turn need: the tools on offer, the permission seam and the run limits. */
export interface ToolEnvironment {
  /** The tools on offer, by name. */
  tools: ReadonlyMap<string, AnyTool>;
  canUseTool: CanUseTool;
  /** The turn's signal: every tool context carries it, and each step checks it. */
  signal: AbortSignal;
  /** Everything of a {@link ToolContext} but the signal and the tool_use id. */
  toolContext: Omit<ToolContext, 'signal' | 'toolUseId'>;
  toolTimeoutMs: number;
  /** Per-tool overrides of `toolTimeoutMs`, by tool name (own properties only). */
  toolTimeouts?: Readonly<Record<string, number>>;
  afterTool?: AfterTool;
  /** The tool-result budget (default `DEFAULT_RESULT_BUDGETS`); see docs/context.md. */
  resultBudgets?: ResultBudgets;
  /** Where a running tool's progress reports go (see `ToolContext.progress`); absent: tools get no `progress`. */
  onToolProgress?: ToolProgressSink;
  /** The loop runs a subagent: denials are worded for one (it reports back instead of waiting for the person). */
  subagent?: boolean;
}

/** Receives one running call's progress report; called synchronously, its throws are dropped. */
export type ToolProgressSink = (toolUseId: string, toolName: string, update: ToolProgress) => void;

/**
 * One tool use made ready: either `ready` to run (permission granted, input parsed and possibly
 * rewritten), or already `settled` with the outcome the model gets (an error it can act on, or a
 * preset result of a resumed turn).
 */
export type PreparedToolUse =
  | { status: 'ready'; use: ToolUseBlock; tool: AnyTool; input: unknown }
  | { status: 'settled'; use: ToolUseBlock; outcome: ToolRunOutcome; preset: boolean };

/** A {@link PreparedToolUse} that will run. */
export type ReadyToolUse = Extract<PreparedToolUse, { status: 'ready' }>;

/**
 * The context a tool (and the permission check) sees for one use; with `toolName` (a call about to
 * run) and a progress sink, it carries `progress`, which never throws.
 */
export function toolContextFor(env: ToolEnvironment, toolUseId: string, toolName?: string): ToolContext {
  const sink = env.onToolProgress;
  if (!sink || toolName === undefined) return { ...env.toolContext, signal: env.signal, toolUseId };
  const progress = (update: ToolProgress): void => {
    try {
      sink(toolUseId, toolName, update);
    } catch {
      // Progress is best-effort: a failing watcher never breaks the call.
    }
  };
  return { ...env.toolContext, signal: env.signal, toolUseId, progress };
}

/** An is_error tool_result. */
export function toolErrorResult(toolUseId: string, content: string): ToolResultBlock {
  return { type: 'tool_result', tool_use_id: toolUseId, content, is_error: true };
}

/**
 * What the model is told about a denied tool use; a person's denial asks it to stop and wait — or,
 * for a subagent (which cannot talk to the person), to finish without it and report the denial.
 */
export function denialText(kind: Extract<Decision, { behavior: 'deny' }>['kind'], reason: string, subagent = false): string {
  if (subagent && kind === 'person') {
    return `The person declined this tool call (${reason}). You are a subagent: do not try it again or work around it. Finish your task without this step and say in your final report that it was declined.`;
  }
  if (subagent) {
    return `Permission denied by ${kind}: ${reason}. You are a subagent: do not work around the intent of this denial. Try another reasonable way, or finish and say in your final report what you could not do.`;
  }
  if (kind === 'person') {
    return `The person declined this tool call (${reason}). Do not try it again or work around it: stop and wait for their instructions.`;
  }
  return `Permission denied by ${kind}: ${reason}. You may try another reasonable way, but do not work around the intent of this denial; if the action is essential, stop and explain what you need.`;
}

/** A use settled with the preset result a resumed turn supplied (persisted by whoever supplied it). */
export function presetToolUse(use: ToolUseBlock, result: ToolResultBlock): PreparedToolUse {
  return { status: 'settled', use, outcome: { result }, preset: true };
}

/** The message of any thrown value (an object whose `toString` throws too gives a placeholder). */
function thrownMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  try {
    return String(err);
  } catch {
    return 'an unprintable value was thrown';
  }
}

function settled(use: ToolUseBlock, content: string): PreparedToolUse {
  return { status: 'settled', use, outcome: { result: toolErrorResult(use.id, content) }, preset: false };
}

/**
 * Prepares one tool use: finds the tool, parses the input with its schema, runs its
 * `validateInput`, asks {@link CanUseTool}, and parses a rewritten input again. Every failure
 * settles the use with an is_error result the model can act on (unknown tool, invalid input,
 * denial, invalid rewrite, a throwing check); never throws.
 */
export async function prepareToolUse(use: ToolUseBlock, env: ToolEnvironment): Promise<PreparedToolUse> {
  const tool = env.tools.get(use.name);
  if (!tool) {
    const names = [...env.tools.keys()].join(', ') || 'none';
    return settled(use, `There is no tool named "${use.name}". Available tools: ${names}.`);
  }
  const parsed = tool.input.safeParse(use.input);
  if (!parsed.success) return settled(use, `Invalid input for ${tool.name}: ${describeZodError(parsed.error)}`);
  const ctx = toolContextFor(env, use.id);
  try {
    if (tool.validateInput) {
      const validation = await tool.validateInput(parsed.data, ctx);
      if (!validation.ok) return settled(use, `Invalid input for ${tool.name}: ${validation.message}`);
    }
    const decision = await env.canUseTool(tool, parsed.data, ctx);
    if (decision.behavior === 'deny') return settled(use, denialText(decision.kind, decision.reason, env.subagent));
    if (decision.updatedInput === undefined) return { status: 'ready', use, tool, input: parsed.data };
    const rewritten = tool.input.safeParse(decision.updatedInput);
    if (!rewritten.success) return settled(use, `The rewritten input for ${tool.name} is invalid: ${describeZodError(rewritten.error)}`);
    return { status: 'ready', use, tool, input: rewritten.data };
  } catch (err) {
    return settled(use, `The permission check for ${tool.name} failed: ${thrownMessage(err)}`);
  }
}
