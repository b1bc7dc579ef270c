import type { AnyTool, AskSource, Decision } from '@switchboard/agent';
import type { Logger } from 'pino';
import type { ApprovalBroker, ApprovalOutcome, ApprovalRequest } from '../approvals/broker.js';
import { suspendedForShutdown, type TurnPolicyContext } from '../engine.js';
import { alwaysRuleFor } from '../permissions/always-rules.js';
import { toolMatchKind } from '../permissions/matchers.js';
import type { Storage } from '../storage.js';
import { permissionRequestResponder, type HookBridge } from './hook-bridge.js';

/** One tool call the pipeline asked about. */
export interface AskCall {
  tool: AnyTool;
  /** The input that will run once allowed. */
  input: unknown;
  /** Set when a hook or the tool rewrote the input. */
  updatedInput: unknown;
  /** The scrubbed one-line summary people see. */
  summary: string;
  /** Why the pipeline asked. */
  reason: string;
  source: AskSource;
  toolUseId: string;
  signal: AbortSignal;
  workspace: string;
}

/** What {@link askForApproval} works with. */
export interface AskDeps {
  storage: Storage;
  broker: ApprovalBroker;
  hooks: HookBridge;
  log: Logger;
}

/** One approval to request for a turn (a tool call's ask, or a load of instructions). */
export interface TurnApproval {
  /** The name people and the audit see (a tool's, or `load_instructions`). */
  name: string;
  toolUseId: string;
  input: unknown;
  summary: string;
  reason: string;
  source: AskSource;
  signal: AbortSignal;
  /** What "always allow" saves, in stored form (`'[]'`: nothing). */
  alwaysRule: string;
  /** The options an allow chooses between (a plan approval's modes); see `ApprovalRequest.choices`. */
  choices?: readonly string[];
  autoResponder?: ApprovalRequest['autoResponder'];
}

/**
 * Requests one approval for a turn: the turn waits in `awaiting_approval` (until its last open
 * approval is answered: its subagents may wait at once), the requester's chat is
 * shown an `approval_requested` event, and the outcome is emitted as `approval_resolved` (unless
 * the turn is suspended for shutdown: its approval stays open). A stopped turn's approval is
 * cancelled before anyone is told.
 */
export async function requestTurnApproval(
  deps: Pick<AskDeps, 'storage' | 'broker' | 'log'>,
  ctx: TurnPolicyContext,
  ask: TurnApproval,
  requesterPrincipalId: string | null,
): Promise<ApprovalOutcome> {
  const { session, turn, message } = ctx;
  const { toolUseId, signal } = ask;
  // Several approvals of one turn may wait at once (its subagents): it runs again after the last.
  deps.broker.waitStarted(turn.id);
  try {
    await deps.storage.turns.setState(turn.id, 'awaiting_approval');
    const outcome = await deps.broker.request({
      turnId: turn.id,
      toolUseId,
      sessionId: session.id,
      agentId: session.agentId,
      channelId: `${message.channel}:${message.account}`,
      tool: ask.name,
      alwaysRule: ask.alwaysRule,
      summary: ask.summary,
      input: ask.input,
      source: ask.source,
      ...(ask.choices ? { choices: ask.choices } : {}),
      requesterPrincipalId,
      conversation: message.conversation,
      signal,
      notify: (approval) =>
        ctx.emit({
          type: 'approval_requested',
          approvalId: approval.id,
          toolUseId,
          name: ask.name,
          summary: `${approval.summary} — ${ask.reason}`,
          expiresAt: approval.expiresAt.toISOString(),
          source: approval.source,
          ...(approval.choices ? { choices: approval.choices } : {}),
        }),
      ...(ask.autoResponder ? { autoResponder: ask.autoResponder } : {}),
    });
    // A stopped turn's approval is cancelled now, before anyone is told it was resolved (the turn's
    // end cancels it too; the claim is atomic, so only one of them records it).
    if (signal.aborted && !suspendedForShutdown(signal)) {
      await deps.broker
        .cancelTurn(turn.id, 'the turn was stopped')
        .catch((err: unknown) => deps.log.error({ err, turnId: turn.id }, 'could not cancel the approval of a stopped turn'));
    }
    // A turn suspended for shutdown resumes and asks again: its approval is still open, its cards stay live.
    if (!suspendedForShutdown(signal)) {
      ctx.emit({ type: 'approval_resolved', approvalId: outcome.approval.id, toolUseId, allowed: outcome.allowed, by: outcome.by });
    }
    return outcome;
  } finally {
    // No await between the count and the write: a wait that starts next writes after this one.
    if (deps.broker.waitEnded(turn.id) && !signal.aborted) await deps.storage.turns.setState(turn.id, 'running');
  }
}

/**
 * Turns a tool call's ask into an approval ({@link requestTurnApproval}); PermissionRequest hooks
 * may answer it (mode asks only).
 */
export async function askForApproval(deps: AskDeps, ctx: TurnPolicyContext, call: AskCall, requesterPrincipalId: string | null): Promise<Decision> {
  const { session, turn } = ctx;
  const { tool, input, toolUseId, signal, workspace, reason } = call;
  const autoResponder = permissionRequestResponder(
    deps.hooks,
    { sessionId: session.id, turnId: turn.id, agentId: session.agentId, toolName: tool.name, toolInput: input, toolUseId, reason },
    deps.log,
  );
  const outcome = await requestTurnApproval(
    deps,
    ctx,
    {
      name: tool.name,
      toolUseId,
      input,
      summary: call.summary,
      reason,
      source: call.source,
      signal,
      alwaysRule: alwaysRuleFor(tool, input, toolMatchKind(tool.name), workspace),
      ...(autoResponder ? { autoResponder } : {}),
    },
    requesterPrincipalId,
  );
  if (outcome.allowed) return call.updatedInput === undefined ? { behavior: 'allow' } : { behavior: 'allow', updatedInput: call.updatedInput };
  return {
    behavior: 'deny',
    reason: outcome.reason ?? 'the approval was declined',
    kind: outcome.by.startsWith('hook:') ? 'hook' : outcome.by === 'system' ? 'limit' : 'person',
  };
}
