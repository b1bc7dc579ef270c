import type { Logger } from 'pino';
import type { ApprovalBroker } from '../approvals/broker.js';
import type { TurnPolicyContext } from '../engine.js';
import { requestTurnApproval } from '../policy/ask.js';
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
  return async (file, reason) => {
    const outcome = await requestTurnApproval(
      deps,
      ctx,
      {
        name: LOAD_INSTRUCTIONS,
        toolUseId: `agents-md:${file.path}:${file.sha256.slice(0, 16)}`,
        input: { path: file.path, sha256: file.sha256 },
        summary: `load ${file.path} as instructions (${file.text.length} characters)`,
        reason,
        source: 'safety',
        signal,
        // Approving content is per content (its hash): "always allow" saves no rule.
        alwaysRule: '[]',
      },
      requesterPrincipalId,
    );
    deps.log.info({ path: file.path, allowed: outcome.allowed, by: outcome.by }, 'instruction file approval decided');
    return outcome.allowed && !signal.aborted;
  };
}
