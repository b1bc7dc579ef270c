import type { Logger } from 'pino';
import type { ApprovalBroker } from '../approvals/broker.js';
import type { TurnPolicyContext } from '../engine.js';
import { suspendedForShutdown } from '../engine.js';
import type { Storage } from '../storage.js';
import type { AskToLoad } from './agents-md.js';

/** The tool name approvals to load an instruction file carry (no such tool exists: nothing runs). */
export const LOAD_INSTRUCTIONS = 'load_instructions';

/** What {@link askToLoadFor} works with. */
export interface AskToLoadDeps {
  storage: Storage;
  broker: ApprovalBroker;
  log: Logger;
}

/**
 * The {@link AskToLoad} of one turn: an approval with source `safety` (no automatic responder may
 * answer it), shown in the person's chat like a tool's; the turn waits in `awaiting_approval`.
 * Its id is stable per file and content, so a turn resumed after a restart finds it again.
 */
export function askToLoadFor(deps: AskToLoadDeps, ctx: TurnPolicyContext, requesterPrincipalId: string, signal: AbortSignal): AskToLoad {
  const { session, turn, message } = ctx;
  return async (file, reason) => {
    const toolUseId = `agents-md:${file.path}:${file.sha256.slice(0, 16)}`;
    await deps.storage.turns.setState(turn.id, 'awaiting_approval');
    try {
      const outcome = await deps.broker.request({
        turnId: turn.id,
        toolUseId,
        sessionId: session.id,
        agentId: session.agentId,
        channelId: `${message.channel}:${message.account}`,
        tool: LOAD_INSTRUCTIONS,
        alwaysRule: `${LOAD_INSTRUCTIONS}(${file.path})`,
        summary: `load ${file.path} as instructions (${file.text.length} characters)`,
        input: { path: file.path, sha256: file.sha256 },
        source: 'safety',
        requesterPrincipalId,
        conversation: message.conversation,
        signal,
        notify: (approval) =>
          ctx.emit({
            type: 'approval_requested',
            approvalId: approval.id,
            toolUseId,
            name: LOAD_INSTRUCTIONS,
            summary: `${approval.summary} — ${reason}`,
            expiresAt: approval.expiresAt.toISOString(),
            source: approval.source,
          }),
      });
      if (!suspendedForShutdown(signal)) {
        ctx.emit({ type: 'approval_resolved', approvalId: outcome.approval.id, toolUseId, allowed: outcome.allowed, by: outcome.by });
      }
      deps.log.info({ path: file.path, allowed: outcome.allowed, by: outcome.by }, 'instruction file approval decided');
      return outcome.allowed && !signal.aborted;
    } finally {
      if (!signal.aborted) await deps.storage.turns.setState(turn.id, 'running');
    }
  };
}
