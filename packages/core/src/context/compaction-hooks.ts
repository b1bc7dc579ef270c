import type { Logger } from 'pino';
import type { HookTurnFields } from '../permissions/hooks.js';
import type { HookBridge } from '../policy/hook-bridge.js';
import type { CompactionHookEvent, CompactionHooks } from './compaction-run.js';

/**
 * The PreCompact / PostCompact hooks of one compaction, through the policy's hook bridge. Never
 * throws (hook failures count as no opinion). PreCompact opinions' `additionalContext` become
 * extra summary instructions.
 */
export function compactionHooks(bridge: HookBridge, fields: HookTurnFields, log: Logger): CompactionHooks {
  return {
    async pre(event: CompactionHookEvent) {
      if (!bridge.has('PreCompact')) return undefined;
      const outcome = await bridge.run(
        'PreCompact',
        { ...fields, trigger: event.trigger, tokensBefore: event.tokensBefore, ...(event.instructions ? { instructions: event.instructions } : {}) },
        log,
      );
      const extra = outcome.opinions.map((o) => o.additionalContext).filter((t): t is string => !!t);
      return extra.length > 0 ? extra.join('\n') : undefined;
    },
    async post(event: CompactionHookEvent) {
      if (!bridge.has('PostCompact')) return;
      await bridge.run(
        'PostCompact',
        { ...fields, trigger: event.trigger, tokensBefore: event.tokensBefore, tokensAfter: event.tokensAfter ?? 0, throughSeq: event.throughSeq ?? 0 },
        log,
      );
    },
  };
}
