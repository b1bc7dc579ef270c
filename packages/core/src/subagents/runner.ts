import {
  type AfterTool,
  type AgentEvent,
  type AnyTool,
  type BeforeCall,
  type CanUseTool,
  type Message,
  type ModelClient,
  query,
  READ_RESULT_TOOL,
  type ResultBudgets,
  type RetryPolicy,
  type SubagentLauncher,
  type SubagentRequest,
  type ToolContext,
  type ToolResult,
  type ToolResultBlock,
  messageText,
} from '@switchboard/agent';
import type { Logger } from 'pino';
import { READ_RESULT_DEFAULT_LENGTH, type ReadResultInput, resultPage } from '../context/read-result.js';
import type { PermissionMode } from '../permissions/modes.js';
import type { SidechainState, Storage } from '../storage.js';
import { SKILL_TOOL, type SkillRun } from '../skills/skill-run.js';
import { boundedReport, GENERAL_SUBAGENT, type SubagentType, subagentTools } from './types.js';

/** Gives a slot back; calling it more than once does nothing. */
export type ReleaseSlot = () => void;

/**
 * Concurrency slots for subagents: at most a number at once across the gateway and per turn (the
 * gateway passes an `ExecRunQueue` keyed by turn id). Contract: resolves with a release function
 * once a slot is free for `key`; calls `onWait` once when it has to wait; rejects with the signal's
 * reason when aborted while waiting.
 */
export interface SubagentSlots {
  acquire(key: string, signal: AbortSignal, onWait?: () => void): Promise<ReleaseSlot>;
}

/** What every subagent of the gateway runs with (the engine's own model settings). */
export interface SubagentRunnerOptions {
  storage: Storage;
  log: Logger;
  model: ModelClient;
  modelName: string;
  fallbackModel?: string;
  maxTokens: number;
  retry: RetryPolicy;
  toolTimeoutMs: number;
  toolTimeouts?: Readonly<Record<string, number>>;
  maxContinuations: number;
  resultBudgets?: ResultBudgets;
  /** The subagent types of an agent by name (`general` included); undefined: the agent has none. */
  types(agentId: string): ReadonlyMap<string, SubagentType> | undefined;
  /** Levels of subagents that may nest (1: a subagent cannot start one). */
  maxDepth: number;
  slots: SubagentSlots;
}

/** One parent turn, as its subagents see it. */
export interface SubagentParent {
  sessionId: string;
  turnId: string;
  agentId: string;
  /** The parent's tools of this turn, after the pre-filter (what the person is offered). */
  tools: readonly AnyTool[];
  /** The permission seam of one subagent (see `TurnPolicy.forSubagent`); absent: `canUseTool` as is. */
  forSubagent?(sub: { label: string; mode?: PermissionMode }): { canUseTool: CanUseTool };
  canUseTool: CanUseTool;
  /**
   * The parent run's skills: each subagent forks them (`SkillRun.fork`), so it starts with what the
   * parent has narrowed so far and its own `skill` calls narrow its whole run, never the parent's.
   */
  skills?: SkillRun;
  /** The parent's tool context, without the per-call fields (and without its skills: see `skills`). */
  toolContext: Omit<ToolContext, 'signal' | 'toolUseId' | 'progress' | 'subagent' | 'skills'>;
  /** The PostToolUse hooks of the parent turn, run for the subagent's calls too. */
  afterTool?: AfterTool;
  /** The budget check before each model call (the parent turn's). */
  beforeCall?: BeforeCall;
  /** Every model call's usage, counted and recorded for the parent turn's principal and agent. */
  onUsage(ev: Extract<AgentEvent, { type: 'usage' }>): void;
  log: Logger;
}

/** `read_result` for a subagent: its own cut results first, else the tool as it is (the session's). */
function sidechainReader(tool: AnyTool, cut: ReadonlyMap<string, string>): AnyTool {
  return {
    ...tool,
    async call(input, ctx) {
      const { reference, offset, length } = input as ReadResultInput;
      const whole = cut.get(reference);
      if (whole === undefined) return tool.call(input, ctx);
      return { content: resultPage(whole, reference, offset ?? 0, length ?? READ_RESULT_DEFAULT_LENGTH) };
    },
  };
}

/** The model's request for a subagent, as the `task` tool passes it. */
type Request = SubagentRequest;

/** The text of the last assistant message of a subagent's conversation. */
function finalText(messages: readonly Message[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'assistant');
  return last ? messageText(last).trim() : '';
}

const STOPPED: Partial<Record<string, string>> = {
  aborted: 'The subagent was stopped before it finished (the turn was stopped or the task timed out).',
  max_turns: 'The subagent ran out of model calls before it finished.',
};

/**
 * Runs subagents for the `task` tool (docs/subagents.md): the same query loop with a fresh message
 * list (the type's instructions and the prompt), in the parent's workspace, under the parent's
 * principal and permission seam (a mode never above the parent's), with the type's tools
 * intersected with the parent's. Its transcript is a sidechain in the store, linked to the parent
 * turn and tool_use; only its final text (bounded) returns.
 */
export class SubagentRunner {
  constructor(private readonly options: SubagentRunnerOptions) {}

  /** The launcher of one parent turn's subagents at `depth` (0: the turn itself starts them); undefined when the agent has none or the depth is reached. */
  launcher(parent: SubagentParent, depth = 0): SubagentLauncher | undefined {
    const types = this.options.types(parent.agentId);
    if (!types || depth >= this.options.maxDepth) return undefined;
    return (request, ctx) => this.run(parent, types, depth + 1, request, ctx);
  }

  private async run(parent: SubagentParent, types: ReadonlyMap<string, SubagentType>, depth: number, request: Request, ctx: ToolContext): Promise<ToolResult> {
    const typeName = request.type ?? GENERAL_SUBAGENT;
    const type = types.get(typeName);
    if (!type) return { content: `Unknown subagent type "${typeName}". Available: ${[...types.keys()].join(', ')}.`, isError: true };
    const label = `${type.name}: ${request.description}`;
    const started = Date.now();
    let release: ReleaseSlot;
    try {
      release = await this.options.slots.acquire(parent.turnId, ctx.signal, () =>
        ctx.progress?.({ message: 'waiting for a free subagent slot', elapsedMs: Date.now() - started }),
      );
    } catch {
      return { content: STOPPED.aborted!, isError: true };
    }
    try {
      return await this.runSlotted(parent, type, depth, label, request, ctx);
    } finally {
      release();
    }
  }

  private async runSlotted(parent: SubagentParent, type: SubagentType, depth: number, label: string, request: Request, ctx: ToolContext): Promise<ToolResult> {
    const { storage } = this.options;
    const log = parent.log.child({ subagent: type.name, parentToolUseId: ctx.toolUseId, depth });
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: request.prompt }] }];
    const key = { sessionId: parent.sessionId, toolUseId: ctx.toolUseId };
    await storage.sidechains.start({ ...key, turnId: parent.turnId, type: type.name, description: request.description, messages });
    ctx.progress?.({ message: `🤖 ${label}` });
    const mayDelegate = depth < this.options.maxDepth;
    // Results the budget cut live only here (a sidechain is not among the session's entries): the
    // subagent's read_result pages them from this map.
    const cutResults = new Map<string, string>();
    const tools = subagentTools(parent.tools, type, mayDelegate).map((tool) => (tool.name === READ_RESULT_TOOL ? sidechainReader(tool, cutResults) : tool));
    const seam = parent.forSubagent?.({ label, ...(type.mode ? { mode: type.mode } : {}) }) ?? { canUseTool: parent.canUseTool };
    const skills = parent.skills?.fork();
    const child: SubagentParent = { ...parent, tools, ...(skills ? { skills } : {}) };
    const launcher = mayDelegate ? this.launcher(child, depth) : undefined;
    const opts = this.options;
    const loop = query({
      model: opts.model,
      modelName: type.model ?? opts.modelName,
      ...(opts.fallbackModel ? { fallbackModel: opts.fallbackModel } : {}),
      maxTokens: opts.maxTokens,
      // A subagent offered the skill tool is told which skills it may load, like the parent.
      system: [{ type: 'text', text: type.instructions }, ...(skills && tools.some((t) => t.name === SKILL_TOOL) ? skills.listing() : [])],
      messages: [...messages],
      tools,
      canUseTool: seam.canUseTool,
      signal: ctx.signal,
      maxTurns: type.maxTurns,
      toolContext: { ...parent.toolContext, ...(skills ? { skills } : {}), ...(launcher ? { subagent: launcher } : {}) },
      toolTimeoutMs: opts.toolTimeoutMs,
      ...(opts.toolTimeouts ? { toolTimeouts: opts.toolTimeouts } : {}),
      ...(opts.resultBudgets ? { resultBudgets: opts.resultBudgets } : {}),
      retry: opts.retry,
      maxContinuations: opts.maxContinuations,
      ...(parent.beforeCall ? { beforeCall: parent.beforeCall } : {}),
      ...(parent.afterTool ? { afterTool: parent.afterTool } : {}),
      subagent: true,
    });
    let results: ToolResultBlock[] = [];
    const flushResults = () => {
      if (results.length === 0) return;
      messages.push({ role: 'user', content: results });
      results = [];
    };
    let state: SidechainState = 'failed';
    try {
      let step = await loop.next();
      while (!step.done) {
        const ev = step.value;
        switch (ev.type) {
          case 'usage':
            parent.onUsage(ev);
            break;
          case 'assistant_message':
            flushResults();
            if (ev.message.content.length > 0) messages.push(ev.message);
            await storage.sidechains.save(key.sessionId, key.toolUseId, messages, 'running');
            break;
          case 'tool_start':
            ctx.progress?.({ message: `🤖 ${label} · ${ev.name}` });
            break;
          case 'tool_end':
            results.push(ev.result);
            if (ev.fullContent !== undefined) cutResults.set(ev.toolUseId, ev.fullContent);
            break;
          case 'user_message':
            flushResults();
            messages.push(ev.message);
            break;
          default:
            break;
        }
        step = await loop.next();
      }
      flushResults();
      const end = step.value;
      state = end.reason === 'completed' ? 'completed' : end.reason === 'aborted' ? 'aborted' : 'failed';
      log.info({ reason: end.reason, calls: messages.filter((m) => m.role === 'assistant').length }, 'subagent finished');
      const text = boundedReport(finalText(messages), type.resultBudget);
      if (end.reason === 'completed') return { content: text || '(The subagent finished without a report.)' };
      const why = STOPPED[end.reason] ?? `The subagent stopped: ${end.error ?? end.reason}.`;
      return { content: text ? `${why}\nIts last report:\n${text}` : why, isError: true };
    } finally {
      flushResults();
      await storage.sidechains
        .save(key.sessionId, key.toolUseId, messages, state)
        .catch((err: unknown) => log.error({ err }, 'could not store the subagent transcript'));
    }
  }
}
