import type { Logger } from 'pino';
import type { TurnPolicy } from '../engine.js';
import type { Storage } from '../storage.js';
import type { ApprovalRequest } from '../approvals/broker.js';
import { preToolUseFromHooks, runHooks, type HookEvent, type HookPayloads, type HookRunResult, type HookTurnFields } from '../permissions/hooks.js';
import type { PreToolUseCallback } from '../permissions/pipeline.js';
import type { PolicyHookOptions } from './settings.js';

/**
 * The turn policy's bridge to the configured hooks: each event is run with the payload its
 * {@link HookPayloads} entry names, the hooks' own environment and default timeout. Never throws
 * (hook failures count as no opinion, see `runHooks`).
 */
export class HookBridge {
  constructor(private readonly options: PolicyHookOptions) {}

  /** Whether any hook is configured for `event`. */
  has(event: HookEvent): boolean {
    return (this.options.config[event]?.length ?? 0) > 0;
  }

  /** Runs the hooks of `event` with its payload. */
  run<E extends HookEvent>(event: E, payload: HookPayloads[E], log: Logger): Promise<HookRunResult> {
    return runHooks(event, payload, this.options.config, log, { env: this.options.env, defaultTimeoutMs: this.options.defaultTimeoutMs });
  }

  /** The pipeline's PreToolUse callback, when PreToolUse hooks are configured. */
  preToolUse(log: Logger): PreToolUseCallback | undefined {
    if (!this.has('PreToolUse')) return undefined;
    return preToolUseFromHooks(this.options.config, log, { env: this.options.env, defaultTimeoutMs: this.options.defaultTimeoutMs });
  }
}

/** What the turn's hook callbacks are about. */
export interface TurnHookContext {
  bridge: HookBridge;
  storage: Storage;
  log: Logger;
  /** The turn's ids, in every payload. */
  turn: HookTurnFields;
  /** The person's message (UserPromptSubmit). */
  prompt: string;
}

/**
 * The turn policy's hook callbacks: `afterTool` (PostToolUse / PostToolUseFailure: their
 * `additionalContext` goes to the model), `beforeTurn` (SessionStart on a session's first turn,
 * then UserPromptSubmit: a deny refuses the message) and `afterTurn` (Stop). Only those whose
 * events have hooks are set.
 */
export function turnHookCallbacks(hooks: TurnHookContext): Pick<TurnPolicy, 'afterTool' | 'beforeTurn' | 'afterTurn'> {
  const { bridge, storage, log, turn } = hooks;
  const callbacks: Pick<TurnPolicy, 'afterTool' | 'beforeTurn' | 'afterTurn'> = {};
  if (bridge.has('PostToolUse') || bridge.has('PostToolUseFailure')) {
    callbacks.afterTool = async ({ tool, input, result, ctx }) => {
      const payload = { ...turn, toolName: tool.name, toolInput: input, toolUseId: ctx.toolUseId, toolResult: result.content };
      const outcome = await bridge.run(result.is_error ? 'PostToolUseFailure' : 'PostToolUse', payload, log);
      const extra = outcome.opinions.map((o) => o.additionalContext).filter((text): text is string => !!text);
      return extra.length > 0 ? extra.join('\n') : undefined;
    };
  }
  if (bridge.has('UserPromptSubmit') || bridge.has('SessionStart')) {
    callbacks.beforeTurn = async () => {
      const first = (await storage.sessions.load(turn.sessionId)).filter((e) => e.kind === 'user').length <= 1;
      if (first) await bridge.run('SessionStart', { ...turn }, log);
      const outcome = await bridge.run('UserPromptSubmit', { ...turn, prompt: hooks.prompt }, log);
      const deny = outcome.opinions.find((o) => o.decision === 'deny');
      return deny ? `Your message was not processed: ${deny.reason ?? 'a gateway hook refused it'}.` : undefined;
    };
  }
  if (bridge.has('Stop')) {
    callbacks.afterTurn = async (reason) => {
      await bridge.run('Stop', { ...turn, reason }, log);
    };
  }
  return callbacks;
}

/**
 * The approval's automatic responder from PermissionRequest hooks (none when no such hook is
 * configured): a deny opinion denies, an allow opinion allows; a failed hook leaves it to people.
 */
export function permissionRequestResponder(
  bridge: HookBridge,
  payload: HookPayloads['PermissionRequest'],
  log: Logger,
): ApprovalRequest['autoResponder'] | undefined {
  if (!bridge.has('PermissionRequest')) return undefined;
  return async () => {
    const outcome = await bridge.run('PermissionRequest', payload, log);
    if (outcome.status === 'failed') return undefined;
    const deny = outcome.opinions.find((o) => o.decision === 'deny');
    if (deny) return { decision: 'deny' as const, name: 'PermissionRequest', ...(deny.reason ? { reason: deny.reason } : {}) };
    const allow = outcome.opinions.find((o) => o.decision === 'allow');
    return allow ? { decision: 'allow' as const, name: 'PermissionRequest' } : undefined;
  };
}
